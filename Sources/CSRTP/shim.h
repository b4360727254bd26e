#ifndef SWITCHBOARD_CSRTP_SHIM_H
#define SWITCHBOARD_CSRTP_SHIM_H
#include <srtp2/srtp.h>
#endif
