import asyncio, aiortc
from aiortc import RTCPeerConnection, RTCConfiguration
from aiortc.mediastreams import AudioStreamTrack, VideoStreamTrack
async def main():
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    pc.addTrack(AudioStreamTrack()); pc.addTrack(VideoStreamTrack())
    await pc.setLocalDescription(await pc.createOffer())
    print(pc.localDescription.sdp, end="")
    await pc.close()
asyncio.run(main())
