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
#endif
