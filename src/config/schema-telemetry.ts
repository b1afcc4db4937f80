// The telemetry section's schema (OpenTelemetry traces, the per-call usage events): part of the one
// schema in ./schema.ts.
import { Type } from '@sinclair/typebox';
import { about, Duration, HeaderName, Strict } from '../fragments.ts';

const Traces = Type.Object(
  {
    endpoint: about(
      Type.String({ pattern: '^https?://[^\\s]+$', title: 'URL', examples: ['http://otel-collector:4318/v1/traces'] }),
      "The OTLP/HTTP traces endpoint, such as a collector's http://otel-collector:4318/v1/traces; a URL without a path gets /v1/traces.",
    ),
    headers: Type.Optional(about(Type.Record(HeaderName, Type.String(), Strict), 'Headers sent with every export, such as the API key of a tracing service.', { default: {} })),
    sampleRatio: Type.Optional(
      about(Type.Number({ minimum: 0, maximum: 1 }), 'The share of traces recorded, decided by the trace id: for a caller\'s trace too (its "sampled" flag is not obeyed; its "not sampled" is).', {
        default: 1,
      }),
    ),
  },
  Strict,
);

const UsageStream = Type.Object(
  {
    file: Type.Optional(about(Type.String({ minLength: 1 }), 'Append the events to this file (beside the config when relative), a JSON object a line; one of file and url.')),
    maxFileSize: Type.Optional(about(Type.Integer({ minimum: 1024 }), 'Bytes the file grows to before it is rotated: renamed <file>.1, the earlier ones moved on.', { default: 100 * 1024 * 1024 })),
    keepFiles: Type.Optional(about(Type.Integer({ minimum: 1, maximum: 100 }), 'Rotated files kept besides the one written; the oldest goes.', { default: 5 })),
    url: Type.Optional(
      about(
        Type.String({ pattern: '^https?://[^\\s]+$', title: 'URL', examples: ['https://billing.example.com/usage-events'] }),
        'POST the events here in batches (application/x-ndjson), again and again until it answers 2xx; one of file and url.',
      ),
    ),
    headers: Type.Optional(about(Type.Record(HeaderName, Type.String(), Strict), "Headers of every POST, such as the endpoint's API key.", { default: {} })),
    batchSize: Type.Optional(about(Type.Integer({ minimum: 1, maximum: 100_000 }), 'Events in one write or POST at most.', { default: 500 })),
    flushInterval: Type.Optional(about(Duration, 'How long an event waits at most before it is written or sent.', { default: '1s' })),
    bufferSize: Type.Optional(
      about(Type.Integer({ minimum: 1, maximum: 10_000_000 }), 'Events waiting at most (the endpoint down, the disk slow); past it new events are dropped and counted, and calls never wait.', {
        default: 100_000,
      }),
    ),
  },
  Strict,
);

export const Telemetry = Type.Object(
  {
    traces: Type.Optional(about(Traces, 'OpenTelemetry traces, exported over OTLP/HTTP (JSON): a span per call, with its token check, counts, authorization server and upstream calls; absent: none.')),
    usage: Type.Optional(
      about(UsageStream, "An event per call made with an app's token (its app, product, route, status and duration), for billing: to a rotating file or an HTTP endpoint; absent: none."),
    ),
  },
  Strict,
);
