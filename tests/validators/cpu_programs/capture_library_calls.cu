// Library calls issued to a stream that is being captured (cuBLAS, cuFFT, cuRAND, cuSPARSE on a
// handle, plan or generator bound to the stream) are recorded into the graph, not run: each
// launch of the graph runs them (OLCF hw13's axpy_cublas_solution captures cublasSaxpy and
// launches the graph 100 times). A host pointer-mode scalar is read at the call, a device one
// when the graph runs; a call a GPU refuses in a capture (a result returned to the host)
// invalidates it. Prints PASS when every check holds.
#include <cmath>
#include <cstdio>
#include <cublas_v2.h>
#include <cufft.h>
#include <curand.h>
#include <cusparse.h>

static int failures = 0;
#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond)) {                            \
      printf("FAIL line %d: ", __LINE__);     \
      printf(__VA_ARGS__);                    \
      printf("\n");                           \
      failures++;                             \
    }                                         \
  } while (0)

int main() {
  const int n = 8;
  cudaStream_t s;
  cudaStreamCreate(&s);

  float hx[n], hy[n];
  for (int i = 0; i < n; i++) hx[i] = (float)(i + 1), hy[i] = 0.0f;
  float *x, *y, *dot, *done, *dbeta, *u, *sv;
  cufftComplex *sig, *spec;
  cudaMalloc(&x, sizeof hx);
  cudaMalloc(&y, sizeof hy);
  cudaMalloc(&dot, sizeof(float));
  cudaMalloc(&done, sizeof(float));
  cudaMalloc(&dbeta, sizeof(float));
  cudaMalloc(&u, n * sizeof(float));
  cudaMalloc(&sv, n * sizeof(float));
  cudaMalloc(&sig, n * sizeof(cufftComplex));
  cudaMalloc(&spec, n * sizeof(cufftComplex));
  cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
  cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice);
  const float minus1 = -1.0f, zero = 0.0f, one = 1.0f;
  cudaMemcpy(dot, &minus1, sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(done, &one, sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dbeta, &zero, sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(u, 0, n * sizeof(float));
  cudaMemset(sv, 0, n * sizeof(float));
  cufftComplex hsig[n];
  for (int i = 0; i < n; i++) hsig[i].x = (float)(i % 3), hsig[i].y = 0.0f;
  cudaMemcpy(sig, hsig, sizeof hsig, cudaMemcpyHostToDevice);
  cudaMemset(spec, 0, n * sizeof(cufftComplex));

  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, s);
  cufftHandle plan;
  cufftPlan1d(&plan, n, CUFFT_C2C, 1);
  cufftSetStream(plan, s);
  curandGenerator_t gen;
  curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10);
  curandSetPseudoRandomGeneratorSeed(gen, 1234ULL);
  curandSetStream(gen, s);
  // A diagonal matrix 2 I as CSR: SpMV gives sv = 2 x.
  int hoff[n + 1], hcol[n];
  float hval[n];
  for (int i = 0; i < n; i++) hoff[i] = i, hcol[i] = i, hval[i] = 2.0f;
  hoff[n] = n;
  int *off, *col;
  float* val;
  cudaMalloc(&off, sizeof hoff);
  cudaMalloc(&col, sizeof hcol);
  cudaMalloc(&val, sizeof hval);
  cudaMemcpy(off, hoff, sizeof hoff, cudaMemcpyHostToDevice);
  cudaMemcpy(col, hcol, sizeof hcol, cudaMemcpyHostToDevice);
  cudaMemcpy(val, hval, sizeof hval, cudaMemcpyHostToDevice);
  cusparseHandle_t sparse;
  cusparseCreate(&sparse);
  cusparseSetStream(sparse, s);
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t vx, vy;
  cusparseCreateCsr(&A, n, n, n, off, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
  cusparseCreateDnVec(&vx, n, x, CUDA_R_32F);
  cusparseCreateDnVec(&vy, n, sv, CUDA_R_32F);

  // ---- one capture with every library (global mode)
  float alpha = 2.0f;
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess, "begin capture");
  CHECK(cublasSaxpy(blas, n, &alpha, x, 1, y, 1) == CUBLAS_STATUS_SUCCESS, "saxpy");
  alpha = 100.0f;  // a host-mode scalar was read at the call: the graph keeps 2
  cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE);
  CHECK(cublasSdot(blas, n, x, 1, y, 1, dot) == CUBLAS_STATUS_SUCCESS, "sdot (device result)");
  cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST);
  CHECK(cufftExecC2C(plan, sig, spec, CUFFT_FORWARD) == CUFFT_SUCCESS, "cufftExecC2C");
  CHECK(curandGenerateUniform(gen, u, n) == CURAND_STATUS_SUCCESS, "curandGenerateUniform");
  cusparseSetPointerMode(sparse, CUSPARSE_POINTER_MODE_DEVICE);  // beta read when the graph runs
  CHECK(cusparseSpMV(sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, done, A, vx, dbeta, vy, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT,
                     nullptr) == CUSPARSE_STATUS_SUCCESS,
        "cusparseSpMV");
  CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess && graph != nullptr, "end capture");

  float hdot, hu[n], hu_prev[n], hsv[n];
  cufftComplex hspec[n];
  cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
  cudaMemcpy(&hdot, dot, sizeof hdot, cudaMemcpyDeviceToHost);
  cudaMemcpy(hu, u, sizeof hu, cudaMemcpyDeviceToHost);
  cudaMemcpy(hspec, spec, sizeof hspec, cudaMemcpyDeviceToHost);
  cudaMemcpy(hsv, sv, sizeof hsv, cudaMemcpyDeviceToHost);
  CHECK(hy[0] == 0.0f && hdot == -1.0f && hu[0] == 0.0f && hspec[0].x == 0.0f && hsv[0] == 0.0f,
        "captured calls ran at capture: y %g dot %g u %g spec %g sv %g", hy[0], hdot, hu[0], hspec[0].x, hsv[0]);

  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, nullptr, nullptr, 0) == cudaSuccess, "instantiate");
  const float two = 2.0f;
  cudaMemcpy(dbeta, &two, sizeof two, cudaMemcpyHostToDevice);  // sv = 2 x + 2 sv from here on

  for (int launch = 1; launch <= 3; launch++) {
    CHECK(cudaGraphLaunch(exec, s) == cudaSuccess, "launch %d", launch);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "synchronize %d", launch);
    cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hdot, dot, sizeof hdot, cudaMemcpyDeviceToHost);
    cudaMemcpy(hu, u, sizeof hu, cudaMemcpyDeviceToHost);
    cudaMemcpy(hspec, spec, sizeof hspec, cudaMemcpyDeviceToHost);
    cudaMemcpy(hsv, sv, sizeof hsv, cudaMemcpyDeviceToHost);
    double want_dot = 0, want_sv = 0;
    for (int i = 0; i < n; i++) {
      CHECK(hy[i] == 2.0f * launch * hx[i], "launch %d: y[%d] = %g, want %g", launch, i, hy[i], 2.0f * launch * hx[i]);
      want_dot += (double)hx[i] * 2.0 * launch * hx[i];
      CHECK(hu[i] > 0.0f && hu[i] <= 1.0f, "launch %d: u[%d] = %g", launch, i, hu[i]);
    }
    CHECK(std::fabs(hdot - want_dot) <= 1e-3 * want_dot, "launch %d: dot %g, want %g", launch, hdot, want_dot);
    for (int l = 1; l <= launch; l++) want_sv = 2.0 * hx[0] + 2.0 * want_sv;
    CHECK(hsv[0] == (float)want_sv, "launch %d: sv[0] = %g, want %g", launch, hsv[0], want_sv);
    // The transform of 0 1 2 0 1 2 0 1: bin 0 is the sum, 7.
    CHECK(std::fabs(hspec[0].x - 7.0f) < 1e-4f && std::fabs(hspec[0].y) < 1e-4f, "launch %d: spec[0] = %g %g", launch,
          hspec[0].x, hspec[0].y);
    if (launch > 1) {
      bool same = true;
      for (int i = 0; i < n; i++) same = same && hu[i] == hu_prev[i];
      CHECK(!same, "launch %d drew the values of the launch before", launch);
    }
    for (int i = 0; i < n; i++) hu_prev[i] = hu[i];
  }

  // ---- the captured graph as a child graph (hw13's shape), launched twice more
  cudaGraph_t parent;
  cudaGraphNode_t child;
  cudaGraphExec_t parent_exec;
  cudaGraphCreate(&parent, 0);
  CHECK(cudaGraphAddChildGraphNode(&child, parent, nullptr, 0, graph) == cudaSuccess, "child graph node");
  CHECK(cudaGraphInstantiate(&parent_exec, parent, nullptr, nullptr, 0) == cudaSuccess, "instantiate parent");
  for (int i = 0; i < 2; i++) cudaGraphLaunch(parent_exec, s);
  cudaStreamSynchronize(s);
  cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
  CHECK(hy[n - 1] == 2.0f * 5 * hx[n - 1], "after 5 launches: y[%d] = %g, want %g", n - 1, hy[n - 1], 10.0f * hx[n - 1]);

  // ---- the per-thread default stream is captured as any other; the legacy stream is not (the
  // call runs at once)
  cublasSetStream(blas, cudaStreamPerThread);
  cudaGraph_t pt_graph = nullptr;
  cudaGraphExec_t pt_exec;
  const float minus2 = -2.0f;
  CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal) == cudaSuccess, "capture per-thread");
  cublasSaxpy(blas, n, &minus2, x, 1, y, 1);
  CHECK(cudaStreamEndCapture(cudaStreamPerThread, &pt_graph) == cudaSuccess && pt_graph != nullptr, "end per-thread capture");
  cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
  CHECK(hy[0] == 10.0f * hx[0], "per-thread capture ran at capture: y[0] = %g", hy[0]);
  cudaGraphInstantiate(&pt_exec, pt_graph, nullptr, nullptr, 0);
  for (int i = 0; i < 4; i++) cudaGraphLaunch(pt_exec, cudaStreamPerThread);
  cudaStreamSynchronize(cudaStreamPerThread);
  cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
  CHECK(hy[0] == 2.0f * hx[0], "after 4 per-thread launches: y[0] = %g, want %g", hy[0], 2.0f * hx[0]);
  cudaGraphExecDestroy(pt_exec);
  cudaGraphDestroy(pt_graph);
  cublasSetStream(blas, 0);
  CHECK(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported, "capture legacy stream");
  cudaGetLastError();
  cublasSaxpy(blas, n, &minus2, x, 1, y, 1);
  cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
  CHECK(hy[0] == 0.0f, "legacy-stream saxpy: y[0] = %g", hy[0]);
  cublasSetStream(blas, s);

  // ---- a result returned to the host cannot be captured (relaxed mode): the call fails and
  // the capture is invalidated; so is a synchronisation of the capturing stream
  float host_dot = -5.0f;
  cudaGraph_t bad = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
  CHECK(cublasSdot(blas, n, x, 1, y, 1, &host_dot) != CUBLAS_STATUS_SUCCESS, "host-mode sdot captured");
  cudaStreamCaptureStatus st;
  cudaStreamIsCapturing(s, &st);
  CHECK(st == cudaStreamCaptureStatusInvalidated, "capture status %d after a host-mode sdot", (int)st);
  CHECK(cudaStreamEndCapture(s, &bad) == cudaErrorStreamCaptureInvalidated && bad == nullptr, "end of an invalidated capture");
  CHECK(host_dot == -5.0f, "host-mode sdot wrote %g in a capture", host_dot);
  cudaGetLastError();
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  CHECK(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported, "synchronize in a capture");
  CHECK(cudaStreamEndCapture(s, &bad) == cudaErrorStreamCaptureInvalidated, "end after a synchronize");
  cudaGetLastError();
  // Outside a capture the same call runs at once.
  CHECK(cublasSdot(blas, n, x, 1, x, 1, &host_dot) == CUBLAS_STATUS_SUCCESS && host_dot == 204.0f, "sdot after the capture: %g",
        host_dot);

  cudaGraphExecDestroy(parent_exec);
  cudaGraphDestroy(parent);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cusparseDestroySpMat(A);
  cusparseDestroyDnVec(vx);
  cusparseDestroyDnVec(vy);
  cusparseDestroy(sparse);
  cublasDestroy(blas);
  cufftDestroy(plan);
  curandDestroyGenerator(gen);
  cudaFree(x), cudaFree(y), cudaFree(dot), cudaFree(done), cudaFree(dbeta), cudaFree(u), cudaFree(sv), cudaFree(sig), cudaFree(spec);
  cudaFree(off), cudaFree(col), cudaFree(val);
  cudaStreamDestroy(s);
  printf(failures ? "FAILED %d\n" : "PASS\n", failures);
  return failures != 0;
}
