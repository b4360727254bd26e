// Module SignalingClient.
