/* Wavefront sweeps on a PX x PY grid: a rank receives from its west and north
   neighbours (blocking), computes, then sends east and south; SWEEPS sweeps from the
   corner (0,0), the message size alternating between SMALL and LARGE.
   Usage: wavefront PX SMALL_BYTES LARGE_BYTES SWEEPS FLOPS */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int px = argc > 1 ? atoi(argv[1]) : 8;
  int small = argc > 2 ? atoi(argv[2]) : 8192;
  int large = argc > 3 ? atoi(argv[3]) : 98304;
  int sweeps = argc > 4 ? atoi(argv[4]) : 4;
  double flops = argc > 5 ? atof(argv[5]) : 2e5;
  int py = size / px;
  int x = rank % px, y = rank / px;
  char* buf = malloc((size_t)large);
  for (int s = 0; s < sweeps; s++) {
    int n = (s % 2) ? large : small;
    if (x > 0)
      MPI_Recv(buf, n, MPI_CHAR, rank - 1, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (y > 0)
      MPI_Recv(buf, n, MPI_CHAR, rank - px, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    smpi_execute_flops(flops * (1.0 + 0.05 * ((x + 3 * y) % 4)));
    if (x < px - 1)
      MPI_Send(buf, n, MPI_CHAR, rank + 1, s, MPI_COMM_WORLD);
    if (y < py - 1)
      MPI_Send(buf, n, MPI_CHAR, rank + px, s, MPI_COMM_WORLD);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
