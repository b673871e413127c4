/* Ping-pong calibration benchmark for SimGrid/SMPI (compiled with smpicc, run by smpirun).
 *
 * For every message size given on the command line, rank 0 and rank 1 run the three
 * experiments of SimGrid's platform-calibration "calibrate" program:
 *   1. a blocking ping-pong: rank 0 times MPI_Send and the following MPI_Recv;
 *   2. an MPI_Isend: rank 0 times the call alone (rank 1 receives);
 *   3. an MPI_Recv posted after the message arrived: rank 1 sends, rank 0 sleeps 10 ms
 *      (simulated) and times MPI_Recv.
 * Each experiment runs ITER times back to back after a barrier; the simulation is
 * deterministic, so the last iteration (steady state) is reported.
 *
 * Output, one line per size on rank 0:
 *   size_bytes half_rtt_us send_us isend_us recv_us
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ITER 3

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long max_size = 1;
  for (int i = 1; i < argc; i++) {
    long s = atol(argv[i]);
    if (s < 0) {
      if (rank == 0) fprintf(stderr, "pingpong: negative size %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (s > max_size) max_size = s;
  }
  char *buf = calloc((size_t)max_size, 1);
  for (int i = 1; i < argc; i++) {
    int s = (int)atol(argv[i]);
    double half_us = 0, send_us = 0, isend_us = 0, recv_us = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < ITER; k++) {
      if (rank == 0) {
        double t0 = MPI_Wtime();
        MPI_Send(buf, s, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        MPI_Recv(buf, s, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t2 = MPI_Wtime();
        half_us = (t2 - t0) * 0.5e6;
        send_us = (t1 - t0) * 1e6;
      } else {
        MPI_Recv(buf, s, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, s, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
    for (int k = 0; k < ITER; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        MPI_Request req;
        double t0 = MPI_Wtime();
        MPI_Isend(buf, s, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req);
        double t1 = MPI_Wtime();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        isend_us = (t1 - t0) * 1e6;
      } else {
        MPI_Recv(buf, s, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
    for (int k = 0; k < ITER; k++) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        usleep(10000); /* smpi_usleep under smpicc: simulated time */
        double t0 = MPI_Wtime();
        MPI_Recv(buf, s, MPI_CHAR, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        recv_us = (t1 - t0) * 1e6;
      } else {
        MPI_Send(buf, s, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
      }
    }
    if (rank == 0) printf("%d %.10g %.10g %.10g %.10g\n", s, half_us, send_us, isend_us, recv_us);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
