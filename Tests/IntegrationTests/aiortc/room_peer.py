#!/usr/bin/env python3
"""An aiortc (PyPI, independent WebRTC stack) member of a Switchboard SFU room.

Speaks the IM channel of docs/protocol.md (hello → welcome, room.join, sfu.offer with its
offer → the server's answer in the result; answers every server sfu.offer with sfu.answer),
sends a sine tone through a custom AudioStreamTrack and records what it receives per remote
track. Driven by Tests/IntegrationTests/AiortcTests.swift.

stdout carries one JSON object per line:
  {"event": "joined", "members": [...]}
  {"event": "offer", "candidates": [...]}             its ICE candidates (loopback only)
  {"event": "negotiated", "generation": N}            after each applied answer / sent answer
  {"event": "summary", "final": bool, "tracks": {...}} when every expected stream has delivered
                                                      --min-seconds of audio, and on exit
Everything else (aiortc/aioice logs, tracebacks) goes to stderr.

The token comes from the SWITCHBOARD_TOKEN environment variable (never the command line:
process listings are world-readable). The process leaves the room and exits when stdin
closes, on SIGTERM, or after --timeout seconds, whichever comes first.

Loopback only: aioice skips 127.0.0.1 when gathering and aiortc defaults to a public STUN
server; the test gives it no ICE servers and makes 127.0.0.1 its only host address.
"""

import argparse
import asyncio
import fractions
import json
import os
import signal
import sys
import time
import urllib.parse

import numpy
import aioice.ice
import websockets
from av import AudioFrame
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

# Loopback only: the one host address aioice gathers on (it filters 127.0.0.1 out by default).
aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"]

SAMPLE_RATE = 48000
# 20 ms: the Opus frame size every WebRTC stack sends (RFC 7587 §4.2 default ptime).
FRAME_SAMPLES = 960
# 10 s: keep the IM channel alive well inside the server's idle timeout (45 s default).
PING_INTERVAL = 10.0
# 0.5 s of the most recent audio per track is analysed: 2 Hz FFT bins, enough for ±3 %.
ANALYSIS_SAMPLES = SAMPLE_RATE // 2


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class SineTrack(MediaStreamTrack):
    """A mono 16-bit sine at `frequency` Hz, paced in real time (as AudioStreamTrack paces
    silence): one 20 ms frame per recv()."""

    kind = "audio"

    def __init__(self, frequency, amplitude=8000):
        super().__init__()
        self.frequency = frequency
        self.amplitude = amplitude
        self._start = None
        self._pts = 0

    async def recv(self):
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        else:
            wait = self._start + self._pts / SAMPLE_RATE - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        n = numpy.arange(self._pts, self._pts + FRAME_SAMPLES)
        samples = (self.amplitude * numpy.sin(2 * numpy.pi * self.frequency * n / SAMPLE_RATE)).astype(numpy.int16)
        frame = AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = SAMPLE_RATE
        frame.pts = self._pts
        frame.time_base = fractions.Fraction(1, SAMPLE_RATE)
        self._pts += FRAME_SAMPLES
        return frame


def dominant_frequency(samples, rate):
    """Frequency (Hz) of the strongest FFT bin over 100–4000 Hz (Hann window, parabolic
    interpolation between bins)."""
    if len(samples) < 1024:
        return None
    x = numpy.asarray(samples, dtype=numpy.float64)
    x = x - x.mean()
    spectrum = numpy.abs(numpy.fft.rfft(x * numpy.hanning(len(x))))
    freqs = numpy.fft.rfftfreq(len(x), 1.0 / rate)
    band = (freqs >= 100) & (freqs <= 4000)
    indices = numpy.nonzero(band)[0]
    k = int(indices[numpy.argmax(spectrum[indices])])
    if 0 < k < len(spectrum) - 1:
        a, b, c = spectrum[k - 1], spectrum[k], spectrum[k + 1]
        denominator = a - 2 * b + c
        offset = 0.5 * (a - c) / denominator if denominator != 0 else 0.0
    else:
        offset = 0.0
    return float((k + offset) * rate / len(x))


class Received:
    """What one remote track delivered."""

    def __init__(self, mid, stream_id, receiver):
        self.mid = mid
        self.stream_id = stream_id
        self.receiver = receiver
        self.frames = 0
        self.samples = 0
        self.rate = SAMPLE_RATE
        self.recent = numpy.zeros(0, dtype=numpy.int16)
        self.ended = False

    def add(self, frame):
        array = frame.to_ndarray()
        channels = len(frame.layout.channels)
        if frame.format.is_planar:
            mono = array[0]
        else:
            mono = array.reshape(-1)[::channels]
        self.frames += 1
        self.samples += len(mono)
        self.rate = frame.sample_rate
        self.recent = numpy.concatenate([self.recent, mono.astype(numpy.int16)])[-ANALYSIS_SAMPLES:]

    async def summary(self):
        rms = float(numpy.sqrt(numpy.mean(self.recent.astype(numpy.float64) ** 2))) if len(self.recent) else 0.0
        packets, lost = 0, 0
        if self.receiver is not None:
            for stats in (await self.receiver.getStats()).values():
                if stats.type == "inbound-rtp":
                    packets += stats.packetsReceived
                    lost += stats.packetsLost
        return {
            "mid": self.mid,
            "streamID": self.stream_id,
            "packets": packets,
            "lost": lost,
            "frames": self.frames,
            "seconds": self.samples / float(self.rate),
            "rms": rms,
            "dominantFrequency": dominant_frequency(self.recent, self.rate),
            "ended": self.ended,
        }


class RoomPeer:
    def __init__(self, args):
        self.args = args
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.ws = None
        self.counter = 0
        self.pending = {}
        self.received = {}  # track id → Received
        self.tasks = []
        self.stop = asyncio.Event()
        self.summary_sent = False
        self.offers = asyncio.Queue()

    # --- IM channel ---

    async def command(self, type_, **fields):
        self.counter += 1
        event_id = "py-%d" % self.counter
        future = asyncio.get_running_loop().create_future()
        self.pending[event_id] = future
        await self.ws.send(json.dumps(dict(v=1, type=type_, eventID=event_id, **fields)))
        result = await asyncio.wait_for(future, 10)
        if result.get("status") != "accepted":
            raise RuntimeError("%s rejected: %s" % (type_, json.dumps(result)))
        return result

    async def reader(self):
        async for text in self.ws:
            message = json.loads(text)
            kind = message.get("type")
            if kind == "result" and message.get("eventID") in self.pending:
                self.pending.pop(message["eventID"]).set_result(message)
            elif kind == "sfu.offer" and "eventID" not in message:
                await self.offers.put(message)
            elif kind in ("room.memberJoined", "room.memberLeft"):
                emit({"event": kind, "member": message.get("member"), "reason": message.get("reason")})
            elif kind == "error":
                log("error frame:", text)

    async def pinger(self):
        while True:
            await asyncio.sleep(PING_INTERVAL)
            await self.ws.send(json.dumps({"v": 1, "type": "ping"}))

    # --- negotiation (the device is polite, protocol §9) ---

    async def answer_offers(self):
        while True:
            offer = await self.offers.get()
            await self.pc.setRemoteDescription(RTCSessionDescription(sdp=offer["sdp"], type="offer"))
            answer = await self.pc.createAnswer()
            await self.pc.setLocalDescription(answer)
            await self.command("sfu.answer", room=self.args.room, generation=offer["generation"],
                               sdp=self.pc.localDescription.sdp)
            emit({"event": "negotiated", "generation": offer["generation"]})

    def stream_ids(self):
        """mid → msid stream id in the current remote description (the publishing member)."""
        ids = {}
        mid = None
        description = self.pc.remoteDescription
        for line in (description.sdp.splitlines() if description else []):
            if line.startswith("m="):
                mid = None
            elif line.startswith("a=mid:"):
                mid = line[6:].strip()
            elif line.startswith("a=msid:") and mid is not None:
                # "alice%2Flaptop": the member key percent-encoded into an SDP token (RFC 8830).
                ids[mid] = urllib.parse.unquote(line[7:].split()[0])
        return ids

    def on_track(self, track):
        if track.kind != "audio":
            return
        mid, receiver = None, None
        for transceiver in self.pc.getTransceivers():
            if transceiver.receiver.track is track:
                mid, receiver = transceiver.mid, transceiver.receiver
        entry = Received(mid, self.stream_ids().get(mid), receiver)
        self.received[track.id] = entry
        emit({"event": "track", "mid": mid, "streamID": entry.stream_id})

        async def consume():
            try:
                while True:
                    entry.add(await track.recv())
                    self.check_done()
            except MediaStreamError:
                entry.ended = True

        self.tasks.append(asyncio.ensure_future(consume()))

    async def emit_summary(self, final):
        tracks = {}
        for key, entry in list(self.received.items()):
            tracks[key] = await entry.summary()
        emit({"event": "summary", "final": final, "tracks": tracks})

    def check_done(self):
        if self.summary_sent:
            return
        # Stream ids can be filled in after the track event (the mid is assigned with the
        # description); refresh them before looking.
        ids = self.stream_ids()
        for entry in self.received.values():
            if entry.stream_id is None:
                entry.stream_id = ids.get(entry.mid)
        done = [r for r in self.received.values() if r.samples >= self.args.min_seconds * r.rate]
        expected = set(self.args.expect)
        if expected <= {r.stream_id for r in done}:
            self.summary_sent = True
            self.tasks.append(asyncio.ensure_future(self.emit_summary(final=False)))

    async def run(self):
        self.pc.on("track", self.on_track)
        self.pc.addTrack(SineTrack(self.args.frequency))
        async with websockets.connect(self.args.url, max_size=1 << 20) as ws:
            self.ws = ws
            await ws.send(json.dumps({"v": 1, "type": "hello", "token": os.environ["SWITCHBOARD_TOKEN"]}))
            welcome = json.loads(await ws.recv())
            if welcome.get("type") != "welcome":
                raise RuntimeError("no welcome: %s" % json.dumps(welcome))
            self.tasks += [asyncio.ensure_future(self.reader()), asyncio.ensure_future(self.pinger())]
            joined = await self.command("room.join", room=self.args.room)
            emit({"event": "joined", "members": joined.get("members")})
            # Our offer (aiortc gathers in setLocalDescription; the SDP has every candidate).
            await self.pc.setLocalDescription(await self.pc.createOffer())
            candidates = [line[len("a=candidate:"):] for line in self.pc.localDescription.sdp.splitlines()
                          if line.startswith("a=candidate:")]
            emit({"event": "offer", "candidates": candidates})
            result = await self.command("sfu.offer", room=self.args.room, sdp=self.pc.localDescription.sdp)
            await self.pc.setRemoteDescription(RTCSessionDescription(sdp=result["sdp"], type="answer"))
            emit({"event": "negotiated", "generation": result.get("generation")})
            self.tasks.append(asyncio.ensure_future(self.answer_offers()))
            await self.stop.wait()
            try:
                await self.command("room.leave", room=self.args.room)
            except Exception as error:  # leaving is best effort on the way out
                log("room.leave:", error)
        await self.emit_summary(final=True)

    async def close(self):
        for task in self.tasks:
            task.cancel()
        await self.pc.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--room", required=True)
    parser.add_argument("--frequency", type=float, default=523.0)
    parser.add_argument("--expect", action="append", default=[],
                        help="stream id (account/device) whose audio must arrive before the summary")
    parser.add_argument("--min-seconds", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=45.0)
    args = parser.parse_args()

    peer = RoomPeer(args)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, peer.stop.set)
    # stdin closing (the test is done, or died) ends the run.
    def stdin_readable():
        if not os.read(sys.stdin.fileno(), 4096):
            loop.remove_reader(sys.stdin.fileno())
            peer.stop.set()

    loop.add_reader(sys.stdin.fileno(), stdin_readable)
    loop.call_later(args.timeout, peer.stop.set)
    try:
        await peer.run()
    finally:
        await peer.close()


if __name__ == "__main__":
    asyncio.run(main())
