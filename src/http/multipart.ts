// multipart/form-data bodies (RFC 7578; framing by RFC 2046 §5.1.1), read the one way every
// common parser reads them alike, or refused. Parsers differ on a preamble, an epilogue, padding
// after a boundary, LF line ends, folded header lines, a part named twice (undici reads the last
// `name`, or `name*` over `name`; others the first), Content-Transfer-Encoding (undici decodes
// base64 leniently, Go decodes quoted-printable; RFC 7578 §4.7 deprecates it), a part charset or a
// `_charset_` field, a part with `filename=""` (a file to undici, a text field to Go), a bare CR
// or LF in a header line (Werkzeug, cgi and email end the line there), RFC 2231's continued
// parameters (`name*0`, which Werkzeug and Go join into the name) and RFC 2047's encoded words
// (`=?utf-8?q?…?=`, which Python's email decodes), a boundary after a bare CR or LF inside a part
// (Werkzeug, cgi and email take `\n--boundary` for a delimiter), and a name with %22, %0A or %0D
// (undici and Werkzeug decode them, as WHATWG's form encoding writes a quote and line ends): each
// is refused here, so what the gateway validates is what the upstream reads. Like Werkzeug's and
// Go's, the parser also bounds the parts (1,000) and each part's headers (8 KiB).
//
// One pass: every search starts where the last one ended and stops at the part's end, so the time
// is linear in the body, whatever it holds.
import { utf8Text } from '../text.ts';
import { mediaParameters, mediaType, TOKEN, trimOws } from './request.ts';

/** One part: a text field and its UTF-8 text, or a file and its name (its bytes are not read). */
export type Part = { kind: 'field'; name: string; value: string } | { kind: 'file'; name: string; filename: string };

// RFC 2046 §5.1.1: 1 to 70 bchars, not ending in a space.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
/** In a header line, anything but a tab below a space, and DEL. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;
/** As Werkzeug's max_form_parts and Go's multipartmaxparts: past them the work is the client's choice, not the form's. */
const MAX_PARTS = 1000;
const MAX_PART_HEADERS = 8 * 1024;
/** The escapes WHATWG's form encoding writes in a name, which undici and Werkzeug decode. */
const NAME_ESCAPE = /%(?:22|0[aAdD])/;
const isUtf8 = (charset: string | undefined) => charset === undefined || charset.toLowerCase() === 'utf-8';

/** The body's parts in order, or why an upstream parser could read it otherwise. */
export function readMultipart(body: Buffer, boundary: string | undefined): { parts: Part[] } | { problem: string } {
  if (boundary === undefined || !BOUNDARY.test(boundary)) return { problem: 'needs a boundary parameter of 1 to 70 characters (RFC 2046 §5.1.1)' };
  // latin1: one character per byte, so text offsets are byte offsets.
  const text = body.toString('latin1');
  const delimiter = `\r\n--${boundary}`;
  if (!text.startsWith(`--${boundary}`)) return { problem: 'must begin with its boundary (no preamble)' };
  if (text.includes(`\r--${boundary}`)) return { problem: 'has its boundary after a bare CR, which some parsers read as a delimiter' };
  for (let lf = text.indexOf(`\n--${boundary}`); lf !== -1; lf = text.indexOf(`\n--${boundary}`, lf + 1)) {
    if (text[lf - 1] !== '\r') return { problem: 'has its boundary after a bare LF, which some parsers read as a delimiter' };
  }
  const parts: Part[] = [];
  let at = boundary.length + 2;
  for (;;) {
    if (text.startsWith('--', at)) {
      const rest = text.length - at - 2;
      if (rest === 0 || (rest === 2 && text.endsWith('\r\n'))) return { parts };
      return { problem: 'must end with its closing boundary (no epilogue)' };
    }
    if (!text.startsWith('\r\n', at)) return { problem: 'has a boundary followed by something other than a line end' };
    if (parts.length === MAX_PARTS) return { problem: `has more than ${MAX_PARTS} parts` };
    const start = at + 2;
    const end = text.indexOf(delimiter, start);
    if (end === -1) return { problem: 'has no closing boundary' };
    const blank = text.slice(start, Math.min(end, start + MAX_PART_HEADERS + 4)).indexOf('\r\n\r\n');
    if (blank === -1)
      return { problem: end - start > MAX_PART_HEADERS ? `has a part whose headers are longer than ${MAX_PART_HEADERS / 1024} KiB` : 'has a part without a blank line after its headers' };
    const part = readPart(body.subarray(start, start + blank), body.subarray(start + blank + 4, end));
    if ('problem' in part) return part;
    parts.push(part);
    at = end + delimiter.length;
  }
}

function readPart(headBytes: Buffer, content: Buffer): Part | { problem: string } {
  // Browsers write a non-ASCII name or filename as UTF-8 (WHATWG), and parsers read it so.
  const head = utf8Text(headBytes);
  if (head === undefined) return { problem: 'has part headers that are not valid UTF-8' };
  let disposition: string | undefined;
  let type: string | undefined;
  for (const line of head.split('\r\n')) {
    if (CONTROL.test(line)) return { problem: 'has a part header holding a control character, such as a bare CR or LF, where some parsers end the line' };
    const colon = line.indexOf(':');
    // RFC 5322's folded lines (a line starting with a space) and a space before the colon are read otherwise by some.
    if (colon === -1 || !TOKEN.test(line.slice(0, colon))) return { problem: 'has a part header that is not "Name: value"' };
    const name = line.slice(0, colon).toLowerCase();
    const value = trimOws(line.slice(colon + 1));
    if (name === 'content-transfer-encoding') return { problem: 'has a part with a Content-Transfer-Encoding, which RFC 7578 §4.7 deprecates and parsers decode differently' };
    if (name === 'content-disposition') {
      if (disposition !== undefined) return { problem: 'has a part with two Content-Disposition headers' };
      disposition = value;
    } else if (name === 'content-type') {
      if (type !== undefined) return { problem: 'has a part with two Content-Type headers' };
      type = value;
    }
  }
  if (disposition === undefined || mediaType(disposition) !== 'form-data') return { problem: 'has a part without Content-Disposition: form-data' };
  // Parsers that unescape quoted-pairs and parsers that do not read `name="a\"b"` as two names.
  if (disposition.includes('\\')) return { problem: "has a part whose Content-Disposition holds a '\\', which parsers unescape differently" };
  const params = mediaParameters(disposition);
  // RFC 7578 §4.2 rules out RFC 5987's name* and filename*; mediaParameters refuses them with RFC 2231's name*0.
  if (params === undefined) return { problem: 'has a part whose Content-Disposition gives a parameter twice, an RFC 2231 or 5987 one (name*, name*0), or one that cannot be read' };
  const name = params.get('name');
  if (name === undefined) return { problem: 'has a part without a name' };
  const filename = params.get('filename');
  if (NAME_ESCAPE.test(name)) return { problem: 'has a part named with %22, %0A or %0D, which some parsers decode' };
  if (name.includes('=?') || filename?.includes('=?')) return { problem: "has a part named with an RFC 2047 encoded word ('=?'), which some parsers decode" };
  if (filename !== undefined) {
    // A browser sends filename="" with nothing in it for a file input left empty; Go reads such a part as a text field.
    if (filename === '' && content.length > 0) return { problem: 'has a part with filename="" and content, which some parsers read as a text field' };
    return { kind: 'file', name, filename };
  }
  const charset = type === undefined ? undefined : mediaParameters(type);
  if (charset === undefined && type !== undefined) return { problem: 'has a part whose Content-Type gives a parameter twice, an RFC 2231 one (charset*), or one that cannot be read' };
  if (!isUtf8(charset?.get('charset'))) return { problem: 'has a text part in a charset other than UTF-8' };
  const value = utf8Text(content);
  if (value === undefined) return { problem: 'has a text part that is not valid UTF-8' };
  // RFC 7578 §4.6: a `_charset_` field sets the charset of the others, for parsers that read it.
  if (name === '_charset_' && !isUtf8(value)) return { problem: 'has a _charset_ field other than UTF-8' };
  return { kind: 'field', name, value };
}
