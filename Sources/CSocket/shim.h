#ifndef SWITCHBOARD_CSOCKET_SHIM_H
#define SWITCHBOARD_CSOCKET_SHIM_H
// Batch datagram I/O (sendmmsg(2)/recvmmsg(2), Linux ≥ 3.0). glibc declares them only under
// _GNU_SOURCE, which Swift's Glibc module is not built with, so we declare them here.
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <time.h>

struct sb_mmsghdr {
    struct msghdr msg_hdr;  /* message header */
    unsigned int msg_len;   /* bytes transmitted */
};

int sendmmsg(int sockfd, struct sb_mmsghdr *msgvec, unsigned int vlen, int flags);
int recvmmsg(int sockfd, struct sb_mmsghdr *msgvec, unsigned int vlen, int flags, struct timespec *timeout);

static inline int sb_sendmmsg(int fd, struct sb_mmsghdr *v, unsigned int n, int flags) { return sendmmsg(fd, v, n, flags); }
static inline int sb_recvmmsg(int fd, struct sb_mmsghdr *v, unsigned int n, int flags) { return recvmmsg(fd, v, n, flags, NULL); }
#endif
