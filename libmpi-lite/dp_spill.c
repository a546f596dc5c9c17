/*
 * dp_spill.c: the file the direct protocol's send log spills to (to be
 * built: spilling is off until then).
 */
#include "direct.h"

int
dp_spill_open(void)
{
	return -1;
}
