#ifndef SWITCHBOARD_COPUS_SHIM_H
#define SWITCHBOARD_COPUS_SHIM_H
#include <opus/opus.h>

// opus_encoder_ctl / opus_decoder_ctl are variadic macros-backed calls: Swift cannot call
// C variadics, so each request we use gets a typed wrapper.
static inline int sb_opus_set_bitrate(OpusEncoder *enc, opus_int32 bps) {
    return opus_encoder_ctl(enc, OPUS_SET_BITRATE(bps));
}
static inline int sb_opus_set_inband_fec(OpusEncoder *enc, opus_int32 on) {
    return opus_encoder_ctl(enc, OPUS_SET_INBAND_FEC(on));
}
static inline int sb_opus_set_packet_loss_perc(OpusEncoder *enc, opus_int32 pct) {
    return opus_encoder_ctl(enc, OPUS_SET_PACKET_LOSS_PERC(pct));
}
#endif
