// Module DTLS.
