/* pipeline4: a 4-stage stream pipeline with 4 chunks (see pipeline.cuh):
 * checks that per-chunk stage-to-stage events are captured as edges between
 * exactly the right nodes while 4 streams overlap. */
#define PIPELINE_STAGES 4
#define PIPELINE_NAME "4"
#include "pipeline.cuh"
