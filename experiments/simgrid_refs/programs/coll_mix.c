/* A mix of collectives at several sizes, with computation between them.
   Usage: coll_mix ITERATIONS FLOPS */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = argc > 1 ? atoi(argv[1]) : 4;
  double flops = argc > 2 ? atof(argv[2]) : 4e5;
  const int big = 1 << 20;
  char* a = malloc((size_t)big * 2);
  char* b = malloc((size_t)big * 2);
  char* g = malloc((size_t)4096 * size);
  for (int it = 0; it < iters; it++) {
    smpi_execute_flops(flops * (1.0 + 0.03 * ((rank + it) % 5)));
    MPI_Bcast(a, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(a, 1024, MPI_CHAR, it % size, MPI_COMM_WORLD);
    MPI_Reduce(a, b, 2048, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    smpi_execute_flops(flops);
    MPI_Allreduce(a, b, 8192, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allgather(a, 1024, MPI_CHAR, g, 1024, MPI_CHAR, MPI_COMM_WORLD);
    MPI_Alltoall(g, 256, MPI_CHAR, a, 256, MPI_CHAR, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Gather(a, 4096, MPI_CHAR, g, 4096, MPI_CHAR, size - 1, MPI_COMM_WORLD);
    MPI_Scatter(g, 4096, MPI_CHAR, a, 4096, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Bcast(a, big, MPI_CHAR, 0, MPI_COMM_WORLD);
    smpi_execute_flops(flops * 0.5);
    MPI_Allreduce(a, b, 16, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  free(a);
  free(b);
  free(g);
  MPI_Finalize();
  return 0;
}
