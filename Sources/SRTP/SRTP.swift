// Module SRTP.
