// undici's Pool and Agent without its index: undici/index.js also loads fetch, WebSocket,
// EventSource, the cache, the mocks and the proxies (22 to 26 ms of each start), none of which
// the gateway uses. The request and stream methods are undici's api, which index.js puts on
// Dispatcher.prototype: so does this module, with the same objects.
import type { Agent as AgentType, Pool as PoolType } from 'undici';
import api from 'undici/lib/api/index.js';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import PoolClass from 'undici/lib/dispatcher/pool.js';

Object.assign(Dispatcher.prototype, api);

export const Pool: typeof PoolType = PoolClass;
export type Pool = PoolType;
export const Agent: typeof AgentType = AgentClass;
export type Agent = AgentType;
