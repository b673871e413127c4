/* Master-worker with wildcards: rank 0 hands out TASKS tasks and collects results with
   MPI_ANY_SOURCE and MPI_ANY_TAG (the tag says the task's kind); a worker computes a
   task (its cost and result size depend on the task number) and returns the result.
   Usage: master_worker TASKS TASK_BYTES FLOPS */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int tasks = argc > 1 ? atoi(argv[1]) : 200;
  int task_bytes = argc > 2 ? atoi(argv[2]) : 16384;
  double flops = argc > 3 ? atof(argv[3]) : 1e6;
  const int max_result = 262144;
  char* buf = malloc(max_result);
  int header[2];
  if (rank == 0) {
    int next = 0, done = 0;
    for (int w = 1; w < size && next < tasks; w++, next++) {
      header[0] = next;
      MPI_Send(header, 2, MPI_INT, w, 1, MPI_COMM_WORLD);
      MPI_Send(buf, task_bytes, MPI_CHAR, w, 2, MPI_COMM_WORLD);
    }
    while (done < tasks) {
      MPI_Status st;
      MPI_Recv(buf, max_result, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      done++;
      header[0] = next < tasks ? next : -1;
      MPI_Send(header, 2, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
      if (next < tasks) {
        MPI_Send(buf, task_bytes, MPI_CHAR, st.MPI_SOURCE, 2, MPI_COMM_WORLD);
        next++;
      }
    }
    for (int w = 1; w < size; w++)
      if (w > tasks) {
        header[0] = -1;
        MPI_Send(header, 2, MPI_INT, w, 1, MPI_COMM_WORLD);
      }
  } else {
    while (1) {
      MPI_Recv(header, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (header[0] < 0)
        break;
      MPI_Recv(buf, task_bytes, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      int t = header[0];
      smpi_execute_flops(flops * (1 + (t * 37) % 11));
      int result = 1024 << ((t * 13) % 9); /* 1 KiB .. 256 KiB */
      MPI_Send(buf, result, MPI_CHAR, 0, 10 + t % 3, MPI_COMM_WORLD);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
