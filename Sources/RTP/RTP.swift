// Module RTP.
