/* pool/error.c: pool_strerror, the text of enum pool_error. */
#include "pool/pool.h"

const char *pool_strerror(int err)
{
	switch (err) {
	case POOL_OK:
		return "success";
	case POOL_ENOMEM:
		return "out of memory";
	case POOL_EOVERFLOW:
		return "size overflow";
	case POOL_EINVAL:
		return "invalid argument";
	case POOL_ETHREAD:
		return "cannot create worker thread";
	}
	return "unknown pool error";
}
