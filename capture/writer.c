/* writer.c: bundles are written by a thread of the shim, not by the
 * program's thread.
 *
 * A bundle write builds the directory under a temporary name, compresses
 * snapshots and fsyncs every file before the rename (graph/bundle.c): tens
 * of milliseconds on an ordinary disk. A program that re-captures its graph
 * every iteration would otherwise wait for that at every new graph, inside
 * its cuGraphInstantiate or cuGraphLaunch. Here a job (the model, its
 * blobs, whatever memory they point to) is queued and written in order by
 * one background thread; writes of one bundle (the bundle, then its
 * snapshot rewrite) therefore never overtake each other. The queue is
 * bounded by jobs and bytes (a submitter waits when it is full, so memory
 * stays bounded),
 * and at exit the summary waits for it to drain, so every bundle is on disk
 * when the program's exit returns. A failed write is logged and counted
 * (sg_writer_failed). SGCAP_ASYNC_WRITE=0 writes in the caller instead.
 *
 * The thread calls no CUDA and takes no lock of the shim but its own, so a
 * submitter holding `out` cannot deadlock with it. After fork the child
 * starts with an empty queue and no thread (the parent writes its own jobs). */
#include "shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/bundle.h"

/* What may wait: a submitter blocks while the queue holds QUEUE_MAX_JOBS
 * jobs or QUEUE_MAX_BYTES of their memory (a job alone always fits). A
 * count of 16 made a program that re-captures a new graph every step wait
 * for the disk from its 17th graph on (each write fsyncs several files):
 * most of its re-capture overhead on the H200. */
#define QUEUE_MAX_JOBS 4096
#define QUEUE_MAX_BYTES (256ull << 20)

typedef struct job {
    sg_graph_t *g;
    char *path;
    sg_bundle_blob_t *blobs;
    size_t n_blobs;
    unsigned flags;
    void **owned; /* freed after the write (the blobs' data, their names) */
    size_t n_owned;
    char what[24];
    uint64_t bytes; /* memory it holds: its model (estimated) and what it owns */
    struct job *next;
} job_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t more, room, idle;
    job_t *head, *tail;
    size_t queued;
    uint64_t queued_bytes;
    bool busy; /* the thread is writing a job */
    bool started, failed_start, sync;
    pthread_t thread;
} W = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .more = PTHREAD_COND_INITIALIZER,
       .room = PTHREAD_COND_INITIALIZER,
       .idle = PTHREAD_COND_INITIALIZER};
static _Atomic uint64_t failed;

static void job_free(job_t *j)
{
    if (!j) return;
    sg_graph_destroy(j->g);
    free(j->path);
    free(j->blobs);
    for (size_t i = 0; i < j->n_owned; i++)
        free(j->owned[i]);
    free(j->owned);
    free(j);
}

static void job_run(job_t *j)
{
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    /* Bundles are renamed into place whole either way; the fsyncs only
     * guard against a crash of the system itself, and at exit the program
     * would wait on them (SG_BUNDLE_NO_FSYNC). */
    unsigned flags = j->flags | (sg_shim.cfg.fsync ? 0u : (unsigned)SG_BUNDLE_NO_FSYNC);
    int rc = sg_bundle_write(j->g, j->path, j->blobs, j->n_blobs, flags, &diag);
    if (rc != SG_OK) {
        failed++;
        char msg[900];
        sg_shim_log("capture: writing %s (%s) failed: %s", j->path, j->what,
                    sg_diag_format(&diag, msg, sizeof msg));
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    /* Calls that reach our hooks from here (none expected) go straight to
     * the driver. */
    sg_inject_enter_own_call();
    pthread_mutex_lock(&W.lock);
    for (;;) {
        while (!W.head)
            pthread_cond_wait(&W.more, &W.lock);
        job_t *j = W.head;
        W.head = j->next;
        if (!W.head) W.tail = NULL;
        W.queued--;
        W.queued_bytes -= j->bytes;
        W.busy = true;
        pthread_cond_signal(&W.room);
        pthread_mutex_unlock(&W.lock);
        job_run(j);
        job_free(j);
        pthread_mutex_lock(&W.lock);
        W.busy = false;
        if (!W.head) pthread_cond_broadcast(&W.idle);
    }
    return NULL;
}

static bool start_thread(void)
{
    if (W.started) return true;
    if (W.failed_start || W.sync) return false;
    const char *e = getenv("SGCAP_ASYNC_WRITE");
    if (e && strcmp(e, "0") == 0) {
        W.sync = true;
        return false;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&W.thread, &attr, writer_main, NULL) != 0) {
        W.failed_start = true;
        sg_shim_log("capture: cannot start the bundle writer thread: writing in the program's "
                    "thread");
    } else {
        W.started = true;
    }
    pthread_attr_destroy(&attr);
    return W.started;
}

int sg_writer_submit(sg_graph_t *g, const char *path, const sg_bundle_blob_t *blobs, size_t n_blobs,
                     unsigned flags, void **owned, size_t n_owned, const char *what)
{
    job_t *j = calloc(1, sizeof *j);
    if (j) {
        j->g = g;
        j->flags = flags;
        j->path = strdup(path);
        j->blobs = calloc(n_blobs + 1, sizeof *j->blobs);
        j->owned = owned;
        j->n_owned = n_owned;
        snprintf(j->what, sizeof j->what, "%s", what);
        if (j->blobs && n_blobs) memcpy(j->blobs, blobs, n_blobs * sizeof *blobs);
        j->n_blobs = n_blobs;
        /* the blobs' bytes are the job's own when it owns memory (snapshots);
         * code images are shared with the code cache */
        j->bytes = 4096 + (uint64_t)sg_graph_node_count(g) * 512;
        for (size_t i = 0; n_owned && i < n_blobs; i++) j->bytes += blobs[i].size;
    }
    if (!j || !j->path || !j->blobs) {
        if (j) {
            j->owned = NULL; /* the caller keeps them on failure */
            j->g = NULL;
        }
        job_free(j);
        return SG_ENOMEM;
    }
    pthread_mutex_lock(&W.lock);
    bool async = start_thread();
    if (!async) {
        pthread_mutex_unlock(&W.lock);
        job_run(j);
        job_free(j);
        return SG_OK;
    }
    while (W.queued && (W.queued >= QUEUE_MAX_JOBS || W.queued_bytes + j->bytes > QUEUE_MAX_BYTES))
        pthread_cond_wait(&W.room, &W.lock);
    if (W.tail)
        W.tail->next = j;
    else
        W.head = j;
    W.tail = j;
    W.queued++;
    W.queued_bytes += j->bytes;
    pthread_cond_signal(&W.more);
    pthread_mutex_unlock(&W.lock);
    return SG_OK;
}

void sg_writer_flush(void)
{
    pthread_mutex_lock(&W.lock);
    while (W.started && (W.head || W.busy))
        pthread_cond_wait(&W.idle, &W.lock);
    pthread_mutex_unlock(&W.lock);
}

uint64_t sg_writer_failed(void)
{
    return failed;
}

void sg_writer_atfork_prepare(void)
{
    pthread_mutex_lock(&W.lock);
}

void sg_writer_atfork_parent(void)
{
    pthread_mutex_unlock(&W.lock);
}

void sg_writer_atfork_child(void)
{
    /* The parent writes what is queued; the child has no writer thread. */
    W.head = W.tail = NULL;
    W.queued = 0;
    W.queued_bytes = 0; /* (the parent's count would hold the child's first jobs back) */
    W.busy = false;
    W.started = false;
    pthread_mutex_init(&W.lock, NULL);
    pthread_cond_init(&W.more, NULL);
    pthread_cond_init(&W.room, NULL);
    pthread_cond_init(&W.idle, NULL);
}
