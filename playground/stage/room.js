// The link a room opens: the configuration, without the presenter's own view (presenter mode, the parts hidden for
// the projector), so that a phone opens the stage with its controls; and whether its address names this computer
// only (a phone in the room cannot open 127.0.0.1). No DOM: tests/js/room.test.mjs runs it in Node.

// `href` (an absolute URL) without the presenter's view: `viewKeys`, the keys the server names so (protocol.VIEW_KEYS:
// presenter mode, one cell size, the parts hidden), none of the configuration's.
export function roomLink(href, viewKeys) {
  const u = new URL(href);
  for (const k of viewKeys) u.searchParams.delete(k);
  return u.href;
}

// A host only this computer reaches: localhost, 127.0.0.0/8, ::1, 0.0.0.0.
export function isLoopback(hostname) {
  const h = String(hostname).toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1" || h === "0.0.0.0";
}

// The warning beside a link that names this computer only, or "".
export function loopbackWarning(href) {
  const host = new URL(href).hostname;
  return isLoopback(host) ? `This link names this computer (${host}): phones in the room cannot open it. ` +
    "Open the app by this machine's network address, or set PLAYGROUND_PUBLIC_URL." : "";
}
