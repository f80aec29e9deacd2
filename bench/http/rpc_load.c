/*
 * bench/http/rpc_load.c: the load generator of scripts/bench-rpc-http.py
 * (it compiles this with cc): N threads, each on one HTTP/1.1 keep-alive
 * connection to 127.0.0.1:PORT, send the same POST back to back for S
 * seconds and read each reply by its Content-Length. Prints the request
 * count, then every latency in nanoseconds, one a line, on stdout. A C
 * client costs the two cores far less than Python's, so the server is
 * what is measured.
 *
 *   rpc_load PORT THREADS SECONDS AUTH BODY
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct worker {
	pthread_t t;
	int port;
	double seconds;
	const char *req;
	size_t req_len;
	long *lat;
	size_t n, cap;
	int failed;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One reply: headers to the blank line, then Content-Length bytes. 0 or -1. */
static int read_reply(int fd, char **buf, size_t *cap, size_t *have)
{
	size_t body = 0, head = 0;
	for (;;) {
		if (head == 0) {
			char *e = *have >= 4 ? memmem(*buf, *have, "\r\n\r\n", 4) : NULL;
			if (e) {
				head = (size_t)(e - *buf) + 4;
				if (strncmp(*buf, "HTTP/1.1 200", 12) != 0)
					return -1;
				char *cl = memmem(*buf, head, "Content-Length:", 15);
				if (!cl)
					cl = memmem(*buf, head, "content-length:", 15);
				body = cl ? strtoul(cl + 15, NULL, 10) : 0;
			}
		}
		if (head && *have >= head + body) {
			memmove(*buf, *buf + head + body, *have - head - body);
			*have -= head + body;
			return 0;
		}
		if (*cap - *have < 65536) {
			*cap = *cap * 2 + 65536;
			*buf = realloc(*buf, *cap);
			if (!*buf)
				return -1;
		}
		ssize_t r = recv(fd, *buf + *have, *cap - *have, 0);
		if (r <= 0)
			return -1;
		*have += (size_t)r;
	}
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)w->port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		w->failed = 1;
		return NULL;
	}
	char *buf = NULL;
	size_t cap = 0, have = 0;
	double end = now_s() + w->seconds;
	for (;;) {
		double t0 = now_s();
		if (t0 >= end)
			break;
		if (send(fd, w->req, w->req_len, MSG_NOSIGNAL) != (ssize_t)w->req_len ||
		    read_reply(fd, &buf, &cap, &have)) {
			w->failed = 1;
			break;
		}
		if (w->n == w->cap) {
			w->cap = w->cap * 2 + 4096;
			w->lat = realloc(w->lat, w->cap * sizeof(long));
		}
		w->lat[w->n++] = (long)((now_s() - t0) * 1e9);
	}
	free(buf);
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s PORT THREADS SECONDS AUTH BODY\n", argv[0]);
		return 2;
	}
	int port = atoi(argv[1]), n = atoi(argv[2]);
	double seconds = atof(argv[3]);
	const char *auth = argv[4], *body = argv[5];
	size_t cap = strlen(auth) + strlen(body) + 256;
	char *req = malloc(cap);
	int len = snprintf(req, cap,
	                   "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: %s\r\n"
	                   "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	                   auth, strlen(body), body);
	struct worker *w = calloc((size_t)n, sizeof(*w));
	for (int i = 0; i < n; i++) {
		w[i] = (struct worker){
		    .port = port, .seconds = seconds, .req = req, .req_len = (size_t)len};
		pthread_create(&w[i].t, NULL, run, &w[i]);
	}
	size_t total = 0;
	int failed = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		total += w[i].n;
		failed |= w[i].failed;
	}
	if (failed) {
		fprintf(stderr, "a request failed\n");
		return 1;
	}
	printf("%zu\n", total);
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < w[i].n; k++)
			printf("%ld\n", w[i].lat[k]);
	return 0;
}
