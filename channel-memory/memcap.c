/*
 * memcap.c: the default --max-memory of a Channel Memory, from what this
 * machine (or the cgroup the CM runs in) can give it.
 *
 * A fixed default (it was 8 GiB) is wrong both ways: on a small machine
 * or in a container the kernel OOM-kills the CM before it ever pauses a
 * sender, and every job it served is lost; on a big one it wastes what
 * could hold logs. The default is half of the smaller of MemTotal and the
 * cgroup's memory limit (v2 memory.max of our own cgroup, or v1
 * memory.limit_in_bytes), and never below 64 MiB.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm_priv.h"

#define MEMCAP_FLOOR	(64ull << 20)

/* The first unsigned number in file path (after "key" on its line when
   key is not NULL), or 0 when absent or "max". */
static uint64_t
memcap_read(const char *path, const char *key)
{
	char line[512];
	uint64_t v = 0;
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *p = line;

		if (key != NULL) {
			if (strncmp(line, key, strlen(key)) != 0)
				continue;
			p += strlen(key);
		}
		while (*p == ' ' || *p == '\t' || *p == ':')
			p++;
		if (sscanf(p, "%" SCNu64, &v) != 1)
			v = 0;
		break;
	}
	fclose(f);
	return v;
}

/* The memory limit of our cgroup (v2, else v1), 0 when none. */
static uint64_t
memcap_cgroup(void)
{
	char line[512], path[640];
	uint64_t v = 0;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "0::", 3) != 0)
				continue;
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max",
			    strcmp(line + 3, "/") == 0 ? "" : line + 3);
			v = memcap_read(path, NULL);
			break;
		}
		fclose(f);
	}
	if (v == 0)
		v = memcap_read("/sys/fs/cgroup/memory/memory.limit_in_bytes",
		    NULL);
	/* v1 says "no limit" with a huge number */
	return v >= (1ull << 60) ? 0 : v;
}

uint64_t
cm_memcap_default(void)
{
	uint64_t total = memcap_read("/proc/meminfo", "MemTotal") << 10;
	uint64_t cg = memcap_cgroup(), m;

	m = total;
	if (cg != 0 && (m == 0 || cg < m))
		m = cg;
	if (m == 0)
		return CM_DEFAULT_MAX_MEMORY;
	m /= 2;
	return m < MEMCAP_FLOOR ? MEMCAP_FLOOR : m;
}
