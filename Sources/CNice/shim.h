#ifndef SWITCHBOARD_CNICE_SHIM_H
#define SWITCHBOARD_CNICE_SHIM_H
// libnice full agent (synthetic peers) and its public STUN usage API, which the server
// uses on its own shared UDP socket for ICE-lite (stun/usages/ice.h).
#include <glib.h>
#include <gio/gio.h>
#include <nice/agent.h>
#include <stun/stunagent.h>
#include <stun/stunmessage.h>
#include <stun/usages/ice.h>

/* A full ICE agent in the controlling role (RFC 5245 mode), as a browser is against an
 * ICE-lite server; regular nomination when `regular_nomination` (as Chromium does), aggressive
 * otherwise. UPnP and ICE-TCP are switched off when the build has them (tests run on
 * loopback). g_object_set is variadic, hence this wrapper. */
static inline NiceAgent *sb_nice_agent_new_controlling(GMainContext *ctx, gboolean regular_nomination) {
    NiceAgent *agent = nice_agent_new_full(ctx, NICE_COMPATIBILITY_RFC5245,
        regular_nomination ? NICE_AGENT_OPTION_REGULAR_NOMINATION : NICE_AGENT_OPTION_NONE);
    g_object_set(agent, "controlling-mode", TRUE, "ice-tcp", FALSE, NULL);
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(agent), "upnp"))
        g_object_set(agent, "upnp", FALSE, NULL);
    return agent;
}
/* Same with explicit NiceAgentOption flags (e.g. NICE_AGENT_OPTION_CONSENT_FRESHNESS, RFC 7675:
 * authenticated consent checks every few seconds instead of 25 s binding indications, which
 * an ICE-lite server would not count as consent). Used by the synthetic peer. */
static inline NiceAgent *sb_nice_agent_new_controlling_options(GMainContext *ctx, NiceAgentOption options) {
    NiceAgent *agent = nice_agent_new_full(ctx, NICE_COMPATIBILITY_RFC5245, options);
    g_object_set(agent, "controlling-mode", TRUE, "ice-tcp", FALSE, NULL);
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(agent), "upnp"))
        g_object_set(agent, "upnp", FALSE, NULL);
    return agent;
}
#endif
