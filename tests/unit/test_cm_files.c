/*
 * test_cm_files.c: the journal of a job's files at its first CM
 * (channel-memory/fileserv.c), in process. A JobSetup of a job whose
 * journal exists (it starts over) puts every file back as it was before
 * the job: a file it created goes, one it changed gets its saved copy
 * back (content and mode), the newest record first; then the journal
 * goes. A journal that cannot be carried out (a saved copy missing)
 * refuses the setup with a reason and stays, so that the new run never
 * reads what the first one wrote.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../channel-memory/cm_priv.h"
#include "log.h"

static char tmp[256], jbase[300];

static void
put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

static const char *
get(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* j's journal directory, made, in dir (size n), with a manifest of
   these lines. */
static void
journal(struct job *j, char *dir, size_t n, const char *manifest)
{
	char path[600];

	assert_int_equal(fileserv_journal_dir(j, dir, n), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/manifest", dir);
	put(path, manifest, 0600);
}

/* A CM serving any path, its journals under jbase, and job "t". */
static struct job *
setup_job(struct cm *cm)
{
	const char *err = NULL;
	struct job *j;

	memset(cm, 0, sizeof(*cm));
	cm->lfd = -1;
	cm->max_memory = 1 << 20;
	cm->loop = EV_DEFAULT;
	cm->files_root = "/";
	cm->files_journal = jbase;
	assert_int_equal(job_setup(cm, "t", 2, 1, 0, false, &err), 0);
	j = job_find(cm, "t");
	memset(j->token, 7, sizeof(j->token));
	j->has_token = true;
	return j;
}

static void
test_rollback(void **state)
{
	char dir[512], path[600], created[300], changed[300], twice[300];
	char man[2000];
	const char *err = NULL;
	struct stat st;
	struct cm cm;
	struct job *j = setup_job(&cm);

	(void)state;
	snprintf(created, sizeof(created), "%s/created", tmp);
	snprintf(changed, sizeof(changed), "%s/changed", tmp);
	snprintf(twice, sizeof(twice), "%s/twice", tmp);
	snprintf(man, sizeof(man), "C %s\nS 1 %s\nS 2 %s\nS 3 %s\nS 9 %s/never",
	    created, changed, twice, twice, tmp);	/* the last one cut short */
	journal(j, dir, sizeof(dir), man);
	/* the first run: made "created", changed "changed" (it was "old",
	   mode 0640), and "twice" was saved under two names (the newer
	   copy already changed: the older one must win) */
	put(created, "new file", 0644);
	put(changed, "written by the first run", 0600);
	put(twice, "written", 0644);
	snprintf(path, sizeof(path), "%s/saved-1", dir);
	put(path, "old", 0640);
	snprintf(path, sizeof(path), "%s/saved-2", dir);
	put(path, "before the job", 0644);
	snprintf(path, sizeof(path), "%s/saved-3", dir);
	put(path, "changed under its other name", 0644);

	assert_int_equal(fileserv_setup(j, tmp, &err), 0);
	assert_null(get(created));
	assert_string_equal(get(changed), "old");
	assert_int_equal(stat(changed, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_string_equal(get(twice), "before the job");
	assert_int_equal(stat(dir, &st), -1);	/* the journal went */
	job_free_all(&cm);
	unlink(changed);
	unlink(twice);
}

static void
test_rollback_fails(void **state)
{
	char dir[512], path[1200], changed[300], man[400];
	const char *err = NULL;
	struct stat st;
	struct cm cm;
	struct job *j = setup_job(&cm);

	(void)state;
	snprintf(changed, sizeof(changed), "%s/changed2", tmp);
	put(changed, "written by the first run", 0644);
	snprintf(man, sizeof(man), "S 1 %s\n", changed);	/* no saved-1 */
	journal(j, dir, sizeof(dir), man);

	assert_int_equal(fileserv_setup(j, tmp, &err), -1);
	assert_non_null(err);
	assert_non_null(strstr(err, "cannot put back"));
	assert_null(j->fs);
	assert_int_equal(stat(dir, &st), 0);	/* kept for another try */
	job_free_all(&cm);
	snprintf(path, sizeof(path), "rm -rf '%s' '%s'", dir, changed);
	assert_int_equal(system(path), 0);
}

/* Another job (another token) never takes this one's journal. */
static void
test_other_token(void **state)
{
	char a[512], b[512];
	struct cm cm;
	struct job *j = setup_job(&cm);

	(void)state;
	assert_int_equal(fileserv_journal_dir(j, a, sizeof(a)), 0);
	j->token[0] ^= 1;
	assert_int_equal(fileserv_journal_dir(j, b, sizeof(b)), 0);
	assert_string_not_equal(a, b);
	job_free_all(&cm);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rollback),
		cmocka_unit_test(test_rollback_fails),
		cmocka_unit_test(test_other_token),
	};
	int rc;

	log_init("test", LOG_LEVEL_ERROR);
	snprintf(tmp, sizeof(tmp), "/tmp/mpiv-test-cm-files.%d", (int)getpid());
	snprintf(jbase, sizeof(jbase), "%s/journal", tmp);
	if (mkdir(tmp, 0700) < 0)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(jbase, sizeof(jbase), "rm -rf '%s'", tmp);
	if (system(jbase) != 0)
		rc = 1;
	return rc;
}
