import Foundation
import IO

/// The browser client served at `/`: one self-contained HTML page (no CDN, no build step,
/// no resource bundle, so the binary stays a single file). It speaks the IM channel of
/// docs/protocol.md from the browser: sign-in (pasted token or `POST /v1/dev/token`), hello
/// with resume cursor, heartbeat, acks, 1:1 calls with trickle ICE (§4–§6), SFU-routed 1:1
/// calls (`media: sfu`), SFU rooms and room ringing (§9).
///
/// `window.switchboard` exposes the client's state and a `stats()` helper for the Chromium
/// integration tests (Tests/IntegrationTests/Browser*.swift).
public enum WebClient {
    /// The page, assembled once: markup + the script parts (session, call, room).
    public static let page: String = markup.replacingOccurrences(
        of: "/*SCRIPT*/", with: [sessionScript, callScript, simulcastScript, roomScript, roomRingScript, preferencesScript].joined(separator: "\n"))

    static func response() -> HTTPResponse {
        HTTPResponse(status: 200, headers: [
            "content-type": "text/html; charset=utf-8",
            // The page is part of the binary: a new build must not be hidden by a cache.
            "Cache-Control": "no-cache",
            // Everything is inline and same-origin; nothing may be loaded from elsewhere.
            "Content-Security-Policy": "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self' ws: wss:; media-src 'self' blob: mediastream:; img-src 'self' data:",
            "X-Content-Type-Options": "nosniff",
        ], body: Data(page.utf8))
    }

    static let markup = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Switchboard</title>
    <style>
    body { font: 15px system-ui, sans-serif; margin: 1rem; max-width: 60rem; color: #222; }
    fieldset { border: 1px solid #ccc; border-radius: 6px; margin: 0 0 1rem; }
    input, textarea { font: inherit; }
    textarea { width: 100%; height: 3.5rem; }
    button { font: inherit; margin: .15rem; }
    #status { font-weight: bold; }
    #notice { color: #a50; min-height: 1.2em; }
    .videos { display: flex; flex-wrap: wrap; gap: .5rem; }
    video { width: 240px; height: 180px; background: #111; border-radius: 4px; }
    .tile { display: flex; flex-direction: column; font-size: 12px; }
    .ring { background: #ffd; border: 1px solid #cc8; padding: .4rem; margin: .3rem 0; }
    [hidden] { display: none !important; }
    </style>
    </head>
    <body>
    <h1>Switchboard</h1>
    <p>Status: <span id="status">signed out</span> <span id="whoami"></span></p>
    <p id="notice"></p>

    <fieldset id="signin">
      <legend>Sign in</legend>
      <label>Account <input id="account" autocomplete="username"></label>
      <label>Device <input id="device"></label>
      <p><label>Token (from <code>switchboard token</code>)<br><textarea id="token" placeholder="paste a token, or use a development token"></textarea></label></p>
      <button id="devtoken-btn">Get development token</button>
      <button id="connect-btn">Connect</button>
      <button id="signout-btn" hidden>Sign out</button>
    </fieldset>

    <fieldset id="calls">
      <legend>Call</legend>
      <label>Account to call <input id="callee"></label>
      <label><input type="checkbox" id="via-server"> through the server (SFU)</label>
      <button id="call-btn">Call</button>
      <div id="incoming"></div>
      <div id="callbox" hidden>
        <p>Call <span id="call-peer"></span>: <span id="call-state"></span></p>
        <button id="hangup-btn">Hang up</button>
      </div>
    </fieldset>

    <fieldset id="rooms">
      <legend>Room</legend>
      <label>Room name <input id="room-name"></label>
      <button id="join-btn">Join</button>
      <button id="leave-btn" hidden>Leave</button>
      <span id="room-state"></span>
      <div>Members: <span id="room-members"></span></div>
      <label>Invite accounts <input id="invitees" placeholder="carol, dave"></label>
      <button id="ring-btn">Ring them</button>
      <div id="room-invites"></div>
    </fieldset>

    <fieldset>
      <legend>Media</legend>
      <button id="mute-audio">Mute microphone</button>
      <button id="mute-video">Stop camera</button>
      <div class="videos" id="videos">
        <div class="tile"><video id="local-video" autoplay muted playsinline></video>me</div>
      </div>
    </fieldset>
    <script>
    /*SCRIPT*/
    </script>
    </body>
    </html>
    """#
}
