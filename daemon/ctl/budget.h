/**
 * daemon/ctl/budget.h: the control socket's reply budget state, embedded
 * in struct ctl_server (daemon.h). Its functions are in ctl/internal.h and
 * daemon/ctl/budget.c. Loop thread only.
 */
#ifndef PEERD_DAEMON_CTL_BUDGET_H
#define PEERD_DAEMON_CTL_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct ctl_client;

/** What the reply budget keeps besides the server's queued and line_bytes. */
struct ctl_budget {
	uint64_t dying_queued;     /**< of queued, what closing clients hold until cancelled */
	uint64_t reply_est;        /**< a chain reply's text, as recent ones were (decaying max) */
	struct ctl_client *room_q; /**< clients whose next chain call waits for room, in order */
	uint64_t starved_ms;       /**< loop time calls last had room or saw progress */
	uint64_t unwritten;        /**< libuv write queues of all clients at the last tick */
	bool progress;             /**< a reply was written or freed since the last tick */
	uint64_t starve_closed;    /**< of queue_closed: dropped by ctl_budget_tick */
};

#endif
