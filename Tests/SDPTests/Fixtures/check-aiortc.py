import asyncio
from aiortc import RTCPeerConnection, RTCConfiguration, RTCSessionDescription
from aiortc.mediastreams import AudioStreamTrack, VideoStreamTrack
async def main():
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(AudioStreamTrack()); pc.addTrack(VideoStreamTrack())
    await pc.setLocalDescription(await pc.createOffer())
    await pc.setRemoteDescription(RTCSessionDescription(open('/tmp/cap/dump/aiortc-1.16.0-offer.answer.sdp').read(), 'answer'))
    print("PUBOK", [(t.mid, t.currentDirection, [c.mimeType + ":" + str(c.payloadType) for c in t._codecs]) for t in pc.getTransceivers()])
    await pc.close()
    sub = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    kinds = []
    sub.on("track", lambda t: kinds.append(t.kind))
    await sub.setRemoteDescription(RTCSessionDescription(open('/tmp/cap/dump/subscriber.offer.sdp').read(), 'offer'))
    await sub.setLocalDescription(await sub.createAnswer())
    print("SUBOK", kinds)
    open('/tmp/cap/aiortc_sub_answer.sdp', 'w', newline='').write(sub.localDescription.sdp)
    await sub.close()
asyncio.run(main())
