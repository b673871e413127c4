/* 2-D halo exchange on a periodic PX x PY grid (PX * PY ranks): post four receives,
   four sends, wait for all, compute; message sizes alternate between SMALL and LARGE.
   Usage: halo2d PX SMALL_BYTES LARGE_BYTES ITERATIONS FLOPS */
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
  int small = argc > 2 ? atoi(argv[2]) : 4096;
  int large = argc > 3 ? atoi(argv[3]) : 131072;
  int iters = argc > 4 ? atoi(argv[4]) : 10;
  double flops = argc > 5 ? atof(argv[5]) : 5e5;
  int py = size / px;
  int x = rank % px, y = rank / px;
  int nb[4] = {((x + 1) % px) + y * px, ((x + px - 1) % px) + y * px, x + ((y + 1) % py) * px,
               x + ((y + py - 1) % py) * px};
  char* sbuf = malloc(4 * (size_t)large);
  char* rbuf = malloc(4 * (size_t)large);
  MPI_Request req[8];
  for (int it = 0; it < iters; it++) {
    int n = (it % 2) ? large : small;
    for (int k = 0; k < 4; k++)
      MPI_Irecv(rbuf + k * (size_t)large, n, MPI_CHAR, nb[k ^ 1], k, MPI_COMM_WORLD, &req[k]);
    for (int k = 0; k < 4; k++)
      MPI_Isend(sbuf + k * (size_t)large, n, MPI_CHAR, nb[k], k, MPI_COMM_WORLD, &req[4 + k]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    smpi_execute_flops(flops * (1.0 + 0.02 * ((rank * 7 + it) % 5)));
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
