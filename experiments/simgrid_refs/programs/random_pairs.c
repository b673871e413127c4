/* Random pairs: every iteration all ranks draw (same seed everywhere) a random shift s
   and a size log-uniform in [1 B, 4 MiB]; rank r sends to r + s and receives from r - s
   (MPI_Sendrecv), then computes.
   Usage: random_pairs ITERATIONS SEED FLOPS */
#include <mpi.h>
#include <smpi/smpi.h>
#include <math.h>
#include <stdlib.h>

static unsigned long long state;
static double uniform(void)
{ /* splitmix64: the same stream on every rank and platform */
  unsigned long long z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = argc > 1 ? atoi(argv[1]) : 24;
  state = argc > 2 ? strtoull(argv[2], NULL, 10) : 7;
  double flops = argc > 3 ? atof(argv[3]) : 3e5;
  const int max_bytes = 4 << 20;
  char* sbuf = malloc(max_bytes);
  char* rbuf = malloc(max_bytes);
  for (int it = 0; it < iters; it++) {
    int shift = 1 + (int)(uniform() * (size - 1));
    int n = (int)floor(exp(uniform() * log((double)max_bytes)));
    if (n < 1)
      n = 1;
    MPI_Sendrecv(sbuf, n, MPI_CHAR, (rank + shift) % size, it, rbuf, n, MPI_CHAR,
                 (rank - shift + size) % size, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    smpi_execute_flops(flops * (1.0 + uniform()));
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
