/* FFT-like transpose: every iteration computes, then exchanges blocks with MPI_Alltoall.
   Usage: fft_transpose BLOCK_BYTES ITERATIONS FLOPS_PER_ITERATION */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int block = argc > 1 ? atoi(argv[1]) : 65536;
  int iters = argc > 2 ? atoi(argv[2]) : 3;
  double flops = argc > 3 ? atof(argv[3]) : 2e6;
  char* sbuf = malloc((size_t)block * size);
  char* rbuf = malloc((size_t)block * size);
  for (int it = 0; it < iters; it++) {
    smpi_execute_flops(flops * (1.0 + 0.01 * (rank % 7)));
    MPI_Alltoall(sbuf, block, MPI_CHAR, rbuf, block, MPI_CHAR, MPI_COMM_WORLD);
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
