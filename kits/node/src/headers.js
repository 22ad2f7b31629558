// Request headers in whatever shape a framework gives them: Node's
// IncomingHttpHeaders (lowercase names, arrays for some repeats), a plain
// object with any capitalisation, or a Fetch API Headers.

/**
 * headerGetter returns a function that reads one header by name, case
 * insensitively: undefined when absent, repeated values joined by ", " as
 * HTTP allows.
 */
export function headerGetter(headers) {
  if (headers == null) return () => undefined;
  if (typeof headers.get === 'function') {
    return (name) => headers.get(name) ?? undefined;
  }
  if (typeof headers !== 'object') throw new TypeError('receiver: headers must be an object or a Headers');
  const lower = new Map();
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    const key = k.toLowerCase();
    const value = Array.isArray(v) ? v.join(', ') : String(v);
    lower.set(key, lower.has(key) ? `${lower.get(key)}, ${value}` : value);
  }
  return (name) => lower.get(name.toLowerCase());
}
