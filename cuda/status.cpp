/*
 * status.cpp
 *
 * The last failure's message and the interrupt callback: the two pieces of
 * state through which the core talks to its caller without calling back
 * into it.
 */
#include "core.h"

#include <cstdarg>
#include <cstdio>
#include <new>

namespace
{
char		last_message[1024];
GeoaccInterruptCallback interrupt_callback;
}

extern "C" const char *
geoacc_status_message(void)
{
	return last_message;
}

extern "C" void
geoacc_set_status_message(const char *message)
{
	snprintf(last_message, sizeof(last_message), "%s", message ? message : "");
}

extern "C" void
geoacc_set_interrupt_callback(GeoaccInterruptCallback callback)
{
	interrupt_callback = callback;
}

namespace geoacc
{

void
fail(GeoaccStatus status, const char *format, ...)
{
	char		buffer[sizeof(last_message)];
	va_list		args;

	va_start(args, format);
	vsnprintf(buffer, sizeof(buffer), format, args);
	va_end(args);
	throw Error(status, buffer);
}

void
check_interrupt()
{
	if (interrupt_callback && interrupt_callback())
		throw Error(GEOACC_ERR_CANCELLED, "canceled by interrupt");
}

void
clear_status()
{
	last_message[0] = '\0';
}

GeoaccStatus
status_from_exception()
{
	GeoaccStatus status;

	try
	{
		throw;
	}
	catch (const Error &e)
	{
		snprintf(last_message, sizeof(last_message), "%s", e.what());
		status = e.status;
	}
	catch (const std::bad_alloc &)
	{
		snprintf(last_message, sizeof(last_message), "out of host memory");
		status = GEOACC_ERR_HOST_MEMORY;
	}
	catch (const std::exception &e)
	{
		snprintf(last_message, sizeof(last_message), "%s", e.what());
		status = GEOACC_ERR_INTERNAL;
	}
	catch (...)
	{
		snprintf(last_message, sizeof(last_message), "unknown exception");
		status = GEOACC_ERR_INTERNAL;
	}
	return status;
}

}								/* namespace geoacc */
