/* pipeline3: a 3-stage stream pipeline with 4 chunks (see pipeline.cuh):
 * checks that per-chunk stage-to-stage events are captured as edges between
 * exactly the right nodes while 3 streams overlap. */
#define PIPELINE_STAGES 3
#define PIPELINE_NAME "3"
#include "pipeline.cuh"
