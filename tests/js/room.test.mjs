// room.js: the link a room opens (the configuration without the presenter's view) and the loopback warning.
import assert from "node:assert/strict";
import { test } from "node:test";
import { isLoopback, loopbackWarning, roomLink } from "../../playground/stage/room.js";

test("the shared link is the configuration without the presenter's view", () => {
  const href = "http://10.0.0.5:8501/convolution?convolution.stride_nd.h=2&view.presenter=true&hide=kernel%2Cbias&view.cell=40&convolution.compare=FP16";
  const out = new URL(roomLink(href, ["view.presenter", "view.cell", "hide"])); // protocol.VIEW_KEYS
  assert.equal(out.searchParams.get("convolution.stride_nd.h"), "2");
  assert.equal(out.searchParams.get("convolution.compare"), "FP16");
  for (const k of ["view.presenter", "hide", "view.cell"]) assert.equal(out.searchParams.has(k), false, k);
  assert.equal(out.host, "10.0.0.5:8501");
  assert.equal(out.pathname, "/convolution");
});

test("a link to this computer only is warned about", () => {
  for (const h of ["127.0.0.1", "localhost", "127.1.2.3", "[::1]", "0.0.0.0"]) {
    assert.ok(loopbackWarning(`http://${h}:8501/x`).includes("phones in the room cannot open it"), h);
  }
  for (const h of ["10.0.0.5", "playground.example.org", "192.168.1.20"]) assert.equal(loopbackWarning(`http://${h}:8501/x`), "", h);
  assert.equal(isLoopback("LOCALHOST"), true);
  assert.equal(isLoopback("127.example.org"), false);
});
