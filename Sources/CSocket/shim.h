#ifndef SWITCHBOARD_CSOCKET_SHIM_H
#define SWITCHBOARD_CSOCKET_SHIM_H
// Batch datagram I/O (sendmmsg(2)/recvmmsg(2), Linux ≥ 3.0). glibc declares them only under
// _GNU_SOURCE, which Swift's Glibc module is not built with, so we declare them here.
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <time.h>
#include <string.h>

struct sb_mmsghdr {
    struct msghdr msg_hdr;  /* message header */
    unsigned int msg_len;   /* bytes transmitted */
};

int sendmmsg(int sockfd, struct sb_mmsghdr *msgvec, unsigned int vlen, int flags);
int recvmmsg(int sockfd, struct sb_mmsghdr *msgvec, unsigned int vlen, int flags, struct timespec *timeout);

static inline int sb_sendmmsg(int fd, struct sb_mmsghdr *v, unsigned int n, int flags) { return sendmmsg(fd, v, n, flags); }
static inline int sb_recvmmsg(int fd, struct sb_mmsghdr *v, unsigned int n, int flags) { return recvmmsg(fd, v, n, flags, NULL); }
// Kernel receive timestamps (socket(7) SO_TIMESTAMPNS, Documentation/networking/timestamping.rst
// §1.1): each received datagram carries an SCM_TIMESTAMPNS control message with the time
// (CLOCK_REALTIME) the kernel queued it. The CMSG_* macros are not callable from Swift.
static inline int sb_enable_timestampns(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
}
/// Bytes of control buffer one SCM_TIMESTAMPNS message needs (CMSG_SPACE).
static inline size_t sb_timestampns_space(void) { return CMSG_SPACE(sizeof(struct timespec)); }
/// The SCM_TIMESTAMPNS of a received message in ns since the epoch, 0 when absent.
static inline long long sb_timestampns(struct msghdr *msg) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof ts);
            return (long long)ts.tv_sec * 1000000000LL + (long long)ts.tv_nsec;
        }
    }
    return 0;
}
#endif
