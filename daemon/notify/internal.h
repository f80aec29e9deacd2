/*
 * daemon/notify/internal.h: what notify/'s files (and its unit tests)
 * share beyond notify.h: the queued message.
 */
#ifndef PEERD_DAEMON_NOTIFY_INTERNAL_H
#define PEERD_DAEMON_NOTIFY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/** One queued message: its socket, topic, body and number (xmalloc'd, body inline). */
struct notify_msg {
	struct notify_msg *next;
	uint32_t sock;
	uint32_t seq;
	char topic[12];
	size_t len;
	uint8_t body[];
};

#endif
