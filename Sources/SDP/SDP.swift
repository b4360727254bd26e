// Module SDP.
