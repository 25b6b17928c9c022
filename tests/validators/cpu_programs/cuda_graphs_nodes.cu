// CUDA graph nodes beyond a plain stream capture (CUDA 12/13 API): copies described by
// cudaMemcpy3DParms and their parameters read back and changed, fills, host nodes, node queries,
// clones, child graphs, instantiated graphs changed in place (kernel/copy parameters, disabled
// nodes, cudaGraphExecUpdate), memory allocation and free nodes (explicit and captured), and
// conditional nodes (if/else, while, switch; bodies built by node and by capture). Every result
// is checked against the host's own computation; the program prints PASS when all agree.
#include <cstdio>
#include <cstring>
#include <vector>

static int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      printf("FAIL line %d: ", __LINE__);                  \
      printf(__VA_ARGS__);                                 \
      printf("\n");                                        \
      ++failures;                                          \
    }                                                      \
  } while (0)
#define OK(call)                                                                       \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                           \
      printf("FAIL line %d: %s -> %s\n", __LINE__, #call, cudaGetErrorName(e_));       \
      ++failures;                                                                      \
    }                                                                                  \
  } while (0)
#define EXPECT_ERR(call, err)                                                          \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != (err)) {                                                                 \
      printf("FAIL line %d: %s -> %s, expected %s\n", __LINE__, #call, cudaGetErrorName(e_), #err); \
      ++failures;                                                                      \
    }                                                                                  \
    cudaGetLastError();                                                                \
  } while (0)

// Adds `add` to a w x h window of ints whose rows are `pitch` bytes apart.
__global__ void add_rows(int* p, size_t pitch, int w, int h, int add) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) reinterpret_cast<int*>(reinterpret_cast<char*>(p) + y * pitch)[x] += add;
}
__global__ void affine(float* y, const float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
__global__ void mark(int* out, int value) { *out = value; }
__global__ void set_odd(const int* v, cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, *v & 1); }
__global__ void set_value(const int* v, cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, *v); }
// One step of a countdown loop: records c*c at index c, stops the loop at zero.
__global__ void countdown(int* counter, int* trace, cudaGraphConditionalHandle h) {
  int c = --(*counter);
  trace[c] = c * c;
  if (c == 0) cudaGraphSetConditional(h, 0);
}

static int host_calls = 0;
static long long host_total = 0;
struct Window {
  const int* data;
  int n;
};
static void CUDART_CB sum_window(void* p) {
  const Window* w = static_cast<const Window*>(p);
  host_calls++;
  host_total = 0;
  for (int i = 0; i < w->n; i++) host_total += w->data[i];
}

static int node_count(cudaGraph_t g) {
  size_t n = 0;
  OK(cudaGraphGetNodes(g, nullptr, &n));
  return (int)n;
}
static cudaGraphNodeType type_of(cudaGraphNode_t n) {
  cudaGraphNodeType t = cudaGraphNodeTypeCount;
  OK(cudaGraphNodeGetType(n, &t));
  return t;
}

// ---------------------------------------------------------------- copies, fills, host nodes, queries
static void explicit_nodes() {
  const int W = 10, H = 6, w = 4, h = 3, x0 = 2, y0 = 1;
  static int src[H][W];
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++) src[i][j] = i * W + j;
  int* d;
  size_t pitch;
  OK(cudaMallocPitch((void**)&d, &pitch, w * sizeof(int), h));
  int* f;
  size_t fpitch;
  const int fw = 5;
  OK(cudaMallocPitch((void**)&f, &fpitch, fw * sizeof(int), h));
  static int out[h][w], fill_out[h][fw], first_row[fw];

  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  // The window (x0, y0) .. of src into d, then +1 on the device, then back to `out`.
  cudaMemcpy3DParms in = {};
  in.srcPtr = make_cudaPitchedPtr(src, W * sizeof(int), W, H);
  in.srcPos = make_cudaPos(x0 * sizeof(int), y0, 0);
  in.dstPtr = make_cudaPitchedPtr(d, pitch, w, h);
  in.extent = make_cudaExtent(w * sizeof(int), h, 1);
  in.kind = cudaMemcpyHostToDevice;
  cudaGraphNode_t copy_in, add, copy_out, fill, fill_back, fill_row, host;
  OK(cudaGraphAddMemcpyNode(&copy_in, g, nullptr, 0, &in));
  int one = 1, ww = w, hh = h;
  void* args[] = {&d, &pitch, &ww, &hh, &one};
  cudaKernelNodeParams kp = {};
  kp.func = (void*)add_rows;
  kp.gridDim = dim3(1, h);
  kp.blockDim = dim3(32);
  kp.kernelParams = args;
  OK(cudaGraphAddKernelNode(&add, g, &copy_in, 1, &kp));
  one = 1000;  // the node copied the arguments when it was made
  cudaMemcpy3DParms back = {};
  back.srcPtr = make_cudaPitchedPtr(d, pitch, w, h);
  back.dstPtr = make_cudaPitchedPtr(out, w * sizeof(int), w, h);
  back.extent = make_cudaExtent(w * sizeof(int), h, 1);
  back.kind = cudaMemcpyDeviceToHost;
  OK(cudaGraphAddMemcpyNode(&copy_out, g, &add, 1, &back));
  static Window win = {&out[0][0], w * h};
  cudaHostNodeParams hp = {sum_window, &win};
  OK(cudaGraphAddHostNode(&host, g, &copy_out, 1, &hp));
  // A 2D fill of 32-bit words, read back whole and its first row by a 1D copy.
  cudaMemsetParams mp = {};
  mp.dst = f;
  mp.pitch = fpitch;
  mp.value = 0x01020304u;
  mp.elementSize = 4;
  mp.width = fw;
  mp.height = h;
  OK(cudaGraphAddMemsetNode(&fill, g, nullptr, 0, &mp));
  cudaMemcpy3DParms fb = {};
  fb.srcPtr = make_cudaPitchedPtr(f, fpitch, fw, h);
  fb.dstPtr = make_cudaPitchedPtr(fill_out, fw * sizeof(int), fw, h);
  fb.extent = make_cudaExtent(fw * sizeof(int), h, 1);
  fb.kind = cudaMemcpyDefault;
  OK(cudaGraphAddMemcpyNode(&fill_back, g, &fill, 1, &fb));
  OK(cudaGraphAddMemcpyNode1D(&fill_row, g, &fill, 1, first_row, f, fw * sizeof(int), cudaMemcpyDeviceToHost));

  // Queries.
  CHECK(node_count(g) == 7, "nodes %d", node_count(g));
  CHECK(type_of(copy_in) == cudaGraphNodeTypeMemcpy && type_of(add) == cudaGraphNodeTypeKernel &&
            type_of(fill) == cudaGraphNodeTypeMemset && type_of(host) == cudaGraphNodeTypeHost &&
            type_of(fill_row) == cudaGraphNodeTypeMemcpy,
        "node types");
  cudaGraphNode_t roots[4] = {};
  size_t nroots = 4;
  OK(cudaGraphGetRootNodes(g, roots, &nroots));
  CHECK(nroots == 2 && roots[0] == copy_in && roots[1] == fill && roots[2] == nullptr, "roots %zu", nroots);
  size_t nedges = 0;
  OK(cudaGraphGetEdges(g, nullptr, nullptr, &nedges));
  CHECK(nedges == 5, "edges %zu", nedges);
  std::vector<cudaGraphNode_t> from(nedges), to(nedges);
  OK(cudaGraphGetEdges(g, from.data(), to.data(), &nedges));
  CHECK(from[0] == copy_in && to[0] == add, "first edge");
  cudaGraphNode_t dep = nullptr;
  size_t ndep = 1;
  OK(cudaGraphNodeGetDependencies(add, &dep, &ndep));
  CHECK(ndep == 1 && dep == copy_in, "dependencies of the kernel");
  cudaGraphNode_t after[3] = {};
  size_t nafter = 3;
  OK(cudaGraphNodeGetDependentNodes(fill, after, &nafter));
  CHECK(nafter == 2 && after[0] == fill_back && after[1] == fill_row, "dependents of the fill: %zu", nafter);

  // Launch attributes are kept; a kernel with parameters needs kernelParams; a DOT description.
  cudaKernelNodeAttrValue pv = {};
  pv.priority = -1;
  OK(cudaGraphKernelNodeSetAttribute(add, cudaLaunchAttributePriority, &pv));
  cudaKernelNodeAttrValue pr = {};
  OK(cudaGraphKernelNodeGetAttribute(add, cudaLaunchAttributePriority, &pr));
  CHECK(pr.priority == -1, "kernel node priority %d", pr.priority);
  cudaKernelNodeParams none = kp;
  none.kernelParams = nullptr;
  cudaGraph_t scratch;
  cudaGraphNode_t refused;
  OK(cudaGraphCreate(&scratch, 0));
  EXPECT_ERR(cudaGraphAddKernelNode(&refused, scratch, nullptr, 0, &none), cudaErrorInvalidValue);
  OK(cudaGraphDestroy(scratch));
  OK(cudaGraphDebugDotPrint(g, "graph.dot", cudaGraphDebugDotFlagsVerbose));
  FILE* dot = fopen("graph.dot", "r");
  char text[4096] = {};
  if (dot) {
    fread(text, 1, sizeof text - 1, dot);
    fclose(dot);
  }
  CHECK(strstr(text, "digraph") && strstr(text, "MEMCPY") && strstr(text, "\"n0\" -> \"n1\""), "DOT: %s", text);

  // Two launches: the copy reads src when the graph runs.
  cudaGraphExec_t e;
  OK(cudaGraphInstantiate(&e, g, 0));
  OK(cudaGraphLaunch(e, 0));
  src[y0][x0] = -50;
  OK(cudaGraphLaunch(e, 0));
  OK(cudaStreamSynchronize(0));
  long long expect_total = 0;
  for (int i = 0; i < h; i++)
    for (int j = 0; j < w; j++) {
      CHECK(out[i][j] == src[y0 + i][x0 + j] + 1, "window %d %d: %d", i, j, out[i][j]);
      expect_total += src[y0 + i][x0 + j] + 1;
    }
  CHECK(host_calls == 2 && host_total == expect_total, "host node: %d calls, %lld", host_calls, host_total);
  for (int i = 0; i < h; i++)
    for (int j = 0; j < fw; j++) CHECK(fill_out[i][j] == 0x01020304, "fill %d %d: %x", i, j, fill_out[i][j]);
  for (int j = 0; j < fw; j++) CHECK(first_row[j] == 0x01020304, "fill row %d", j);

  // Parameters read back and changed: the copy now starts at (0, 0), the kernel adds 10.
  cudaMemcpy3DParms got = {};
  OK(cudaGraphMemcpyNodeGetParams(copy_in, &got));
  CHECK(got.srcPtr.ptr == (void*)src && got.srcPos.x == x0 * sizeof(int) && got.srcPos.y == (size_t)y0 &&
            got.extent.width == w * sizeof(int) && got.extent.height == (size_t)h && got.kind == cudaMemcpyHostToDevice,
        "copy parameters read back");
  got.srcPos = make_cudaPos(0, 0, 0);
  OK(cudaGraphMemcpyNodeSetParams(copy_in, &got));
  cudaKernelNodeParams kg = {};
  OK(cudaGraphKernelNodeGetParams(add, &kg));
  CHECK(kg.func == (void*)add_rows && kg.gridDim.y == (unsigned)h && kg.blockDim.x == 32u && kg.kernelParams &&
            *(int*)kg.kernelParams[4] == 1 && *(int**)kg.kernelParams[0] == d,
        "kernel parameters read back");
  // (The pointers answered stay valid while the node's parameters do: take the values.)
  int* kd = *(int**)kg.kernelParams[0];
  size_t kpitch = *(size_t*)kg.kernelParams[1];
  int kw = *(int*)kg.kernelParams[2], kh = *(int*)kg.kernelParams[3], ten = 10;
  void* args10[] = {&kd, &kpitch, &kw, &kh, &ten};
  kg.kernelParams = args10;
  OK(cudaGraphKernelNodeSetParams(add, &kg));
  cudaMemsetParams mg = {};
  OK(cudaGraphMemsetNodeGetParams(fill, &mg));
  CHECK(mg.dst == f && mg.value == 0x01020304u && mg.elementSize == 4 && mg.width == (size_t)fw, "fill parameters");
  mg.value = 0xabcdu;
  mg.elementSize = 2;
  mg.width = 2 * fw;
  OK(cudaGraphMemsetNodeSetParams(fill, &mg));
  cudaGraphExec_t e2;
  OK(cudaGraphInstantiate(&e2, g, 0));
  OK(cudaGraphLaunch(e2, 0));
  for (int i = 0; i < h; i++)
    for (int j = 0; j < w; j++) CHECK(out[i][j] == src[i][j] + 10, "after SetParams %d %d: %d", i, j, out[i][j]);
  for (int j = 0; j < fw; j++) CHECK(first_row[j] == (int)0xabcdabcdu, "16-bit fill %d: %x", j, first_row[j]);
  // The first instance kept its parameters.
  OK(cudaGraphLaunch(e, 0));
  CHECK(out[0][0] == src[y0][x0] + 1, "first instance changed: %d", out[0][0]);

  // A clone: its own nodes (found from the original's), changed apart.
  cudaGraph_t c;
  OK(cudaGraphClone(&c, g));
  CHECK(node_count(c) == 7, "clone nodes");
  cudaGraphNode_t cadd = nullptr;
  OK(cudaGraphNodeFindInClone(&cadd, add, c));
  CHECK(cadd != nullptr && cadd != add && type_of(cadd) == cudaGraphNodeTypeKernel, "node found in the clone");
  int hundred = 100;
  args10[4] = &hundred;
  OK(cudaGraphKernelNodeSetParams(cadd, &kg));
  cudaGraphExec_t ec;
  OK(cudaGraphInstantiate(&ec, c, nullptr, nullptr, 0));
  OK(cudaGraphLaunch(ec, 0));
  CHECK(out[1][1] == src[1][1] + 100, "clone launch: %d", out[1][1]);
  OK(cudaGraphLaunch(e2, 0));
  CHECK(out[1][1] == src[1][1] + 10, "original after the clone changed: %d", out[1][1]);

  // An instance changed in place: kernel and copy parameters, a disabled node.
  int five = 5;
  args10[4] = &five;
  OK(cudaGraphExecKernelNodeSetParams(e2, add, &kg));
  static int other_row[fw];
  OK(cudaGraphExecMemcpyNodeSetParams1D(e2, fill_row, other_row, f, fw * sizeof(int), cudaMemcpyDeviceToHost));
  memset(first_row, 0, sizeof first_row);
  OK(cudaGraphLaunch(e2, 0));
  CHECK(out[2][3] == src[2][3] + 5 && other_row[0] == (int)0xabcdabcdu && first_row[0] == 0,
        "instance parameters: %d %x %x", out[2][3], other_row[0], first_row[0]);
  OK(cudaGraphNodeSetEnabled(e2, add, 0));
  unsigned enabled = 1;
  OK(cudaGraphNodeGetEnabled(e2, add, &enabled));
  OK(cudaGraphLaunch(e2, 0));
  CHECK(enabled == 0 && out[2][3] == src[2][3], "disabled kernel: %u %d", enabled, out[2][3]);
  EXPECT_ERR(cudaGraphNodeSetEnabled(e2, host, 0), cudaErrorInvalidValue);  // host nodes stay on
  // The graph's node changed after instantiation does not reach the instance.
  CHECK(cudaGraphExecKernelNodeSetParams(e2, copy_in, &kg) == cudaErrorInvalidValue, "a copy node is no kernel");
  cudaGetLastError();

  // A child graph node holds a copy of the graph it was given.
  cudaGraph_t child, parent;
  OK(cudaGraphCreate(&child, 0));
  static int child_out = 0;
  int* dm;
  OK(cudaMalloc(&dm, sizeof(int)));
  cudaGraphNode_t cm, cb, ch;
  int seven = 7;
  void* margs[] = {&dm, &seven};
  cudaKernelNodeParams mk = {};
  mk.func = (void*)mark;
  mk.gridDim = dim3(1);
  mk.blockDim = dim3(1);
  mk.kernelParams = margs;
  OK(cudaGraphAddKernelNode(&cm, child, nullptr, 0, &mk));
  OK(cudaGraphAddMemcpyNode1D(&cb, child, &cm, 1, &child_out, dm, sizeof(int), cudaMemcpyDeviceToHost));
  OK(cudaGraphCreate(&parent, 0));
  OK(cudaGraphAddChildGraphNode(&ch, parent, nullptr, 0, child));
  OK(cudaGraphDestroy(child));  // the node kept its copy
  cudaGraph_t inner = nullptr;
  OK(cudaGraphChildGraphNodeGetGraph(ch, &inner));
  CHECK(type_of(ch) == cudaGraphNodeTypeGraph && inner && node_count(inner) == 2, "child graph node");
  cudaGraphExec_t ep;
  OK(cudaGraphInstantiate(&ep, parent, 0));
  OK(cudaGraphLaunch(ep, 0));
  CHECK(child_out == 7, "child graph ran: %d", child_out);

  OK(cudaGraphExecDestroy(ep));
  OK(cudaGraphDestroy(parent));
  OK(cudaGraphExecDestroy(ec));
  OK(cudaGraphExecDestroy(e2));
  OK(cudaGraphExecDestroy(e));
  OK(cudaGraphDestroy(c));
  OK(cudaGraphDestroy(g));
  OK(cudaFree(dm));
  OK(cudaFree(d));
  OK(cudaFree(f));
}

// ---------------------------------------------------------------- updates of an instance
static void capture_affine(cudaStream_t s, cudaGraph_t* g, float* y, const float* x, float a, float b, int n,
                           float* host_out, bool extra) {
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  OK(cudaMemsetAsync(y, 0, n * sizeof(float), s));
  affine<<<(n + 63) / 64, 64, 0, s>>>(y, x, a, b, n);
  if (extra) affine<<<(n + 63) / 64, 64, 0, s>>>(y, y, 1.0f, 1.0f, n);
  OK(cudaMemcpyAsync(host_out, y, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  OK(cudaStreamEndCapture(s, g));
}
static void exec_update() {
  const int n = 200;
  float *x, *y;
  OK(cudaMalloc(&x, n * sizeof(float)));
  OK(cudaMalloc(&y, n * sizeof(float)));
  static float hx[n], hy[n];
  for (int i = 0; i < n; i++) hx[i] = 0.5f * i;
  OK(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice));
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  cudaGraph_t g1, g2, g3;
  capture_affine(s, &g1, y, x, 2.0f, 1.0f, n, hy, false);
  cudaGraphNode_t nodes[3];
  size_t count = 3;
  OK(cudaGraphGetNodes(g1, nodes, &count));
  CHECK(count == 3 && type_of(nodes[0]) == cudaGraphNodeTypeMemset && type_of(nodes[1]) == cudaGraphNodeTypeKernel &&
            type_of(nodes[2]) == cudaGraphNodeTypeMemcpy,
        "captured node kinds");
  cudaGraphExec_t e;
  OK(cudaGraphInstantiate(&e, g1, 0));
  OK(cudaGraphLaunch(e, s));
  OK(cudaStreamSynchronize(s));
  CHECK(hy[10] == 2.0f * hx[10] + 1.0f, "first capture: %g", hy[10]);
  // The same shape with other arguments: the instance takes them.
  capture_affine(s, &g2, y, x, 3.0f, -1.0f, n, hy, false);
  cudaGraphExecUpdateResultInfo info = {};
  OK(cudaGraphExecUpdate(e, g2, &info));
  CHECK(info.result == cudaGraphExecUpdateSuccess, "update result %d", (int)info.result);
  OK(cudaGraphLaunch(e, s));
  OK(cudaStreamSynchronize(s));
  for (int i = 0; i < n; i++) CHECK(hy[i] == 3.0f * hx[i] - 1.0f, "updated instance %d: %g", i, hy[i]);
  // A kernel more: refused, the instance unchanged.
  capture_affine(s, &g3, y, x, 4.0f, 0.0f, n, hy, true);
  cudaGraphExecUpdateResult result = cudaGraphExecUpdateSuccess;
  cudaGraphNode_t error_node = nullptr;
  EXPECT_ERR(cudaGraphExecUpdate(e, g3, &error_node, &result), cudaErrorGraphExecUpdateFailure);
  CHECK(result == cudaGraphExecUpdateErrorTopologyChanged, "topology change reported as %d", (int)result);
  OK(cudaGraphLaunch(e, s));
  OK(cudaStreamSynchronize(s));
  CHECK(hy[7] == 3.0f * hx[7] - 1.0f, "instance after a refused update: %g", hy[7]);
  // Instantiated with parameters, the flags are its.
  cudaGraphInstantiateParams ip = {};
  ip.flags = cudaGraphInstantiateFlagUpload;
  ip.uploadStream = s;
  cudaGraphExec_t e3;
  OK(cudaGraphInstantiateWithParams(&e3, g3, &ip));
  unsigned long long flags = 0;
  OK(cudaGraphExecGetFlags(e3, &flags));
  CHECK(ip.result_out == cudaGraphInstantiateSuccess && flags == cudaGraphInstantiateFlagUpload, "instantiate params");
  OK(cudaGraphLaunch(e3, s));
  OK(cudaStreamSynchronize(s));
  CHECK(hy[7] == 4.0f * hx[7] + 1.0f, "three-node capture: %g", hy[7]);
  OK(cudaGraphExecDestroy(e3));
  OK(cudaGraphExecDestroy(e));
  OK(cudaGraphDestroy(g1));
  OK(cudaGraphDestroy(g2));
  OK(cudaGraphDestroy(g3));
  OK(cudaStreamDestroy(s));
  OK(cudaFree(x));
  OK(cudaFree(y));
}

// ---------------------------------------------------------------- memory nodes
static unsigned long long graph_mem(cudaGraphMemAttributeType a) {
  unsigned long long v = 0;
  OK(cudaDeviceGetGraphMemAttribute(0, a, &v));
  return v;
}
static void memory_nodes() {
  const int n = 1000;
  const size_t bytes = n * sizeof(float);
  static float in[n], out[n];
  cudaMemAllocNodeParams ap;
  memset(&ap, 0, sizeof ap);
  ap.bytesize = bytes;
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  ap.poolProps.location.id = 0;
  cudaGraph_t g;
  OK(cudaGraphCreate(&g, 0));
  cudaGraphNode_t ax, ay, cin, k, cout, fx, fy;
  OK(cudaGraphAddMemAllocNode(&ax, g, nullptr, 0, &ap));
  float* dx = (float*)ap.dptr;
  OK(cudaGraphAddMemAllocNode(&ay, g, &ax, 1, &ap));
  float* dy = (float*)ap.dptr;
  CHECK(dx != nullptr && dy != nullptr && dx != dy, "allocation addresses %p %p", (void*)dx, (void*)dy);
  OK(cudaGraphAddMemcpyNode1D(&cin, g, &ay, 1, dx, in, bytes, cudaMemcpyHostToDevice));
  float a = -2.0f, b = 0.25f;
  int nn = n;
  void* args[] = {&dy, &dx, &a, &b, &nn};
  cudaKernelNodeParams kp = {};
  kp.func = (void*)affine;
  kp.gridDim = dim3((n + 127) / 128);
  kp.blockDim = dim3(128);
  kp.kernelParams = args;
  OK(cudaGraphAddKernelNode(&k, g, &cin, 1, &kp));
  OK(cudaGraphAddMemcpyNode1D(&cout, g, &k, 1, out, dy, bytes, cudaMemcpyDeviceToHost));
  OK(cudaGraphAddMemFreeNode(&fx, g, &k, 1, dx));
  OK(cudaGraphAddMemFreeNode(&fy, g, &cout, 1, dy));
  CHECK(type_of(ax) == cudaGraphNodeTypeMemAlloc && type_of(fy) == cudaGraphNodeTypeMemFree, "memory node kinds");
  cudaMemAllocNodeParams back;
  OK(cudaGraphMemAllocNodeGetParams(ay, &back));
  CHECK(back.dptr == dy && back.bytesize == bytes && back.poolProps.allocType == cudaMemAllocationTypePinned,
        "allocation node parameters");
  void* freed = nullptr;
  OK(cudaGraphMemFreeNodeGetParams(fx, &freed));
  CHECK(freed == dx, "free node parameters");
  cudaGraph_t no_clone;
  EXPECT_ERR(cudaGraphClone(&no_clone, g), cudaErrorNotSupported);
  cudaGraphExec_t e;
  OK(cudaGraphInstantiate(&e, g, 0));
  for (int rep = 0; rep < 3; rep++) {  // freed each time: launched again and again
    for (int i = 0; i < n; i++) in[i] = (float)(i % 17) + rep;
    OK(cudaGraphLaunch(e, 0));
    OK(cudaStreamSynchronize(0));
    for (int i = 0; i < n; i++) CHECK(out[i] == a * in[i] + b, "graph memory result %d %d: %g", rep, i, out[i]);
  }
  CHECK(graph_mem(cudaGraphMemAttrUsedMemCurrent) >= 2 * bytes && graph_mem(cudaGraphMemAttrReservedMemHigh) >= 2 * bytes,
        "footprint after launches: %llu", graph_mem(cudaGraphMemAttrUsedMemCurrent));
  OK(cudaDeviceGraphMemTrim(0));
  CHECK(graph_mem(cudaGraphMemAttrReservedMemCurrent) == 0, "footprint after a trim: %llu",
        graph_mem(cudaGraphMemAttrReservedMemCurrent));
  unsigned long long zero = 0, nonzero = 5;
  OK(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
  CHECK(graph_mem(cudaGraphMemAttrUsedMemHigh) == 0, "high watermark reset");
  EXPECT_ERR(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &nonzero), cudaErrorInvalidValue);
  // A free node frees graph allocations only.
  float* plain;
  OK(cudaMalloc(&plain, 16));
  cudaGraphNode_t bad;
  EXPECT_ERR(cudaGraphAddMemFreeNode(&bad, g, nullptr, 0, plain), cudaErrorInvalidValue);
  OK(cudaFree(plain));
  OK(cudaGraphExecDestroy(e));
  OK(cudaGraphDestroy(g));

  // An allocation the graph does not free: live after the launch (a kernel outside the graph
  // uses it); launching again before it is freed is refused; cudaFree frees it for the next.
  cudaGraph_t g2;
  OK(cudaGraphCreate(&g2, 0));
  cudaGraphNode_t keep, fill;
  OK(cudaGraphAddMemAllocNode(&keep, g2, nullptr, 0, &ap));
  float* kept = (float*)ap.dptr;
  cudaMemsetParams mp = {};
  mp.dst = kept;
  mp.value = 0x3f800000u;  // 1.0f
  mp.elementSize = 4;
  mp.width = n;
  mp.height = 1;
  OK(cudaGraphAddMemsetNode(&fill, g2, &keep, 1, &mp));
  cudaGraphExec_t e2;
  OK(cudaGraphInstantiate(&e2, g2, 0));
  OK(cudaGraphLaunch(e2, 0));
  affine<<<(n + 127) / 128, 128>>>(kept, kept, 3.0f, 0.5f, n);
  OK(cudaMemcpy(out, kept, bytes, cudaMemcpyDeviceToHost));
  CHECK(out[n - 1] == 3.5f, "live graph allocation: %g", out[n - 1]);
  EXPECT_ERR(cudaGraphLaunch(e2, 0), cudaErrorInvalidValue);
  OK(cudaFree(kept));
  EXPECT_ERR(cudaFree(kept), cudaErrorInvalidValue);  // freed twice
  OK(cudaGraphLaunch(e2, 0));
  OK(cudaFreeAsync(kept, 0));
  // Freed on launch when instantiated so.
  cudaGraphExec_t e3;
  OK(cudaGraphInstantiate(&e3, g2, cudaGraphInstantiateFlagAutoFreeOnLaunch));
  OK(cudaGraphLaunch(e3, 0));
  OK(cudaGraphLaunch(e3, 0));
  OK(cudaMemcpy(out, kept, bytes, cudaMemcpyDeviceToHost));
  CHECK(out[0] == 1.0f, "auto-freed allocation refilled: %g", out[0]);
  OK(cudaFree(kept));
  OK(cudaGraphExecDestroy(e2));
  OK(cudaGraphExecDestroy(e3));
  OK(cudaGraphDestroy(g2));

  // cudaMallocAsync / cudaFreeAsync in a capture are allocation and free nodes.
  cudaStream_t s;
  OK(cudaStreamCreate(&s));
  cudaGraph_t g3;
  OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  float *cx = nullptr, *cy = nullptr;
  OK(cudaMallocAsync((void**)&cx, bytes, s));
  OK(cudaMallocAsync((void**)&cy, bytes, s));
  OK(cudaMemcpyAsync(cx, in, bytes, cudaMemcpyHostToDevice, s));
  affine<<<(n + 127) / 128, 128, 0, s>>>(cy, cx, 0.5f, 2.0f, n);
  OK(cudaFreeAsync(cx, s));
  OK(cudaMemcpyAsync(out, cy, bytes, cudaMemcpyDeviceToHost, s));
  OK(cudaFreeAsync(cy, s));
  OK(cudaStreamEndCapture(s, &g3));
  cudaGraphNode_t cn[7];
  size_t ncn = 7;
  OK(cudaGraphGetNodes(g3, cn, &ncn));
  CHECK(ncn == 7 && type_of(cn[0]) == cudaGraphNodeTypeMemAlloc && type_of(cn[4]) == cudaGraphNodeTypeMemFree &&
            type_of(cn[6]) == cudaGraphNodeTypeMemFree,
        "captured memory nodes");
  cudaGraphExec_t e4;
  OK(cudaGraphInstantiate(&e4, g3, 0));
  OK(cudaGraphDestroy(g3));
  for (int rep = 0; rep < 2; rep++) {
    for (int i = 0; i < n; i++) in[i] = (float)(3 * i % 11) - rep;
    OK(cudaGraphLaunch(e4, s));
    OK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++) CHECK(out[i] == 0.5f * in[i] + 2.0f, "captured graph memory %d %d: %g", rep, i, out[i]);
  }
  OK(cudaGraphExecDestroy(e4));
  OK(cudaStreamDestroy(s));
}

// ---------------------------------------------------------------- conditional nodes
static cudaGraphNodeParams kernel_params(void* func, void** args) {
  cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
  p.kernel.func = func;
  p.kernel.gridDim = dim3(1);
  p.kernel.blockDim = dim3(1);
  p.kernel.kernelParams = args;
  return p;
}
static int read_int(const int* d) {
  int v = 0;
  OK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}
static void conditional_nodes() {
  int *dv, *dout, *dcount, *dtrace;
  OK(cudaMalloc(&dv, sizeof(int)));
  OK(cudaMalloc(&dout, sizeof(int)));
  OK(cudaMalloc(&dcount, sizeof(int)));
  OK(cudaMalloc(&dtrace, 8 * sizeof(int)));

  // if/else: a kernel sets the handle from *dv; the true body marks 1, the false body fills 2.
  {
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle h;
    OK(cudaGraphConditionalHandleCreate(&h, g));
    void* sargs[] = {&dv, &h};
    cudaGraphNodeParams sp = kernel_params((void*)set_odd, sargs);
    cudaGraphNode_t setter, cond, in_true, in_false;
    OK(cudaGraphAddNode(&setter, g, nullptr, 0, &sp));
    cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 2;
    OK(cudaGraphAddNode(&cond, g, &setter, nullptr, 1, &cp));
    CHECK(cp.conditional.phGraph_out != nullptr && type_of(cond) == cudaGraphNodeTypeConditional, "if node");
    int one = 1;
    void* margs[] = {&dout, &one};
    cudaGraphNodeParams mp = kernel_params((void*)mark, margs);
    OK(cudaGraphAddNode(&in_true, cp.conditional.phGraph_out[0], nullptr, 0, &mp));
    cudaGraphNodeParams fp = {cudaGraphNodeTypeMemset};
    fp.memset.dst = dout;
    fp.memset.value = 2;
    fp.memset.elementSize = 4;
    fp.memset.width = 1;
    fp.memset.height = 1;
    OK(cudaGraphAddNode(&in_false, cp.conditional.phGraph_out[1], nullptr, 0, &fp));
    EXPECT_ERR(cudaGraphDestroy(cp.conditional.phGraph_out[0]), cudaErrorInvalidValue);  // the node's
    cudaGraphExec_t e;
    OK(cudaGraphInstantiate(&e, g, 0));
    for (int v = 0; v < 4; v++) {
      OK(cudaMemcpy(dv, &v, sizeof v, cudaMemcpyHostToDevice));
      OK(cudaMemset(dout, 0, sizeof(int)));
      OK(cudaGraphLaunch(e, 0));
      OK(cudaDeviceSynchronize());
      CHECK(read_int(dout) == ((v & 1) ? 1 : 2), "if/else with %d: %d", v, read_int(dout));
    }
    OK(cudaGraphExecDestroy(e));
    OK(cudaGraphDestroy(g));
  }

  // while: the handle starts at 1 each launch (a do-while); the body, captured into the body
  // graph, counts down and stops the loop at zero.
  {
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle h;
    OK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cp.conditional.size = 1;
    cudaGraphNode_t loop;
    OK(cudaGraphAddNode(&loop, g, nullptr, 0, &cp));
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    OK(cudaStreamBeginCaptureToGraph(s, cp.conditional.phGraph_out[0], nullptr, nullptr, 0,
                                     cudaStreamCaptureModeGlobal));
    countdown<<<1, 1, 0, s>>>(dcount, dtrace, h);
    OK(cudaStreamEndCapture(s, nullptr));
    CHECK(node_count(cp.conditional.phGraph_out[0]) == 1, "captured body");
    cudaGraphExec_t e;
    OK(cudaGraphInstantiate(&e, g, 0));
    for (int start : {5, 3}) {
      OK(cudaMemset(dtrace, 0xff, 8 * sizeof(int)));
      OK(cudaMemcpy(dcount, &start, sizeof start, cudaMemcpyHostToDevice));
      OK(cudaGraphLaunch(e, s));
      OK(cudaStreamSynchronize(s));
      int trace[8];
      OK(cudaMemcpy(trace, dtrace, sizeof trace, cudaMemcpyDeviceToHost));
      CHECK(read_int(dcount) == 0, "loop from %d ended at %d", start, read_int(dcount));
      for (int i = 0; i < 8; i++) CHECK(trace[i] == (i < start ? i * i : -1), "loop from %d: trace[%d] = %d", start, i, trace[i]);
    }
    OK(cudaGraphExecDestroy(e));
    OK(cudaGraphDestroy(g));
    OK(cudaStreamDestroy(s));
  }

  // switch: three bodies mark 10, 11, 12; a value past them runs none.
  {
    cudaGraph_t g;
    OK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle h;
    OK(cudaGraphConditionalHandleCreate(&h, g));
    void* sargs[] = {&dv, &h};
    cudaGraphNodeParams sp = kernel_params((void*)set_value, sargs);
    cudaGraphNode_t setter, sw, body;
    OK(cudaGraphAddNode(&setter, g, nullptr, 0, &sp));
    cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeSwitch;
    cp.conditional.size = 3;
    OK(cudaGraphAddNode(&sw, g, &setter, 1, &cp));
    int marks[3] = {10, 11, 12};
    for (int i = 0; i < 3; i++) {
      void* margs[] = {&dout, &marks[i]};
      cudaGraphNodeParams mp = kernel_params((void*)mark, margs);
      OK(cudaGraphAddNode(&body, cp.conditional.phGraph_out[i], nullptr, 0, &mp));
    }
    cudaGraphExec_t e;
    OK(cudaGraphInstantiate(&e, g, 0));
    for (int v = 0; v < 5; v++) {
      OK(cudaMemcpy(dv, &v, sizeof v, cudaMemcpyHostToDevice));
      OK(cudaMemset(dout, 0xff, sizeof(int)));
      OK(cudaGraphLaunch(e, 0));
      OK(cudaDeviceSynchronize());
      CHECK(read_int(dout) == (v < 3 ? 10 + v : -1), "switch with %d: %d", v, read_int(dout));
    }
    OK(cudaGraphExecDestroy(e));
    OK(cudaGraphDestroy(g));
  }

  // A conditional node inserted into a capture: set -> if [mark 3] -> mark 4 into dcount.
  {
    cudaStream_t s;
    OK(cudaStreamCreate(&s));
    OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status;
    cudaGraph_t g = nullptr;
    const cudaGraphNode_t* deps = nullptr;
    size_t ndeps = 0;
    OK(cudaStreamGetCaptureInfo(s, &status, nullptr, &g, &deps, nullptr, &ndeps));
    cudaGraphConditionalHandle h;
    OK(cudaGraphConditionalHandleCreate(&h, g));
    set_odd<<<1, 1, 0, s>>>(dv, h);
    size_t ndeps12 = 0;  // CUDA 12's form: no edge data
    OK(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, nullptr, &ndeps12));
    CHECK(ndeps12 == 1, "capture info (CUDA 12): %zu", ndeps12);
    OK(cudaStreamGetCaptureInfo(s, &status, nullptr, &g, &deps, nullptr, &ndeps));
    CHECK(status == cudaStreamCaptureStatusActive && ndeps == 1, "capture info: %zu dependencies", ndeps);
    cudaGraphNodeParams cp = {cudaGraphNodeTypeConditional};
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
    cudaGraphNode_t cond;
    OK(cudaGraphAddNode(&cond, g, deps, nullptr, ndeps, &cp));
    OK(cudaStreamUpdateCaptureDependencies(s, &cond, 1, cudaStreamSetCaptureDependencies));
    mark<<<1, 1, 0, s>>>(dcount, 4);
    cudaGraph_t captured;
    OK(cudaStreamEndCapture(s, &captured));
    CHECK(captured == g && node_count(g) == 3, "capture with a conditional: %d nodes", node_count(g));
    cudaGraphNode_t last = nullptr;
    size_t nlast = 1;
    cudaGraphNode_t nodes[3];
    size_t nn = 3;
    OK(cudaGraphGetNodes(g, nodes, &nn));
    OK(cudaGraphNodeGetDependencies(nodes[2], &last, &nlast));
    CHECK(nlast == 1 && last == cond, "the kernel after the conditional depends on it");
    cudaGraphNode_t body;
    int three = 3;
    void* margs[] = {&dout, &three};
    cudaGraphNodeParams mp = kernel_params((void*)mark, margs);
    OK(cudaGraphAddNode(&body, cp.conditional.phGraph_out[0], nullptr, 0, &mp));
    cudaGraphExec_t e;
    OK(cudaGraphInstantiate(&e, g, 0));
    for (int v = 0; v < 2; v++) {
      OK(cudaMemcpy(dv, &v, sizeof v, cudaMemcpyHostToDevice));
      OK(cudaMemset(dout, 0, sizeof(int)));
      OK(cudaMemset(dcount, 0, sizeof(int)));
      OK(cudaGraphLaunch(e, s));
      OK(cudaStreamSynchronize(s));
      CHECK(read_int(dout) == (v ? 3 : 0) && read_int(dcount) == 4, "captured if with %d: %d %d", v, read_int(dout),
            read_int(dcount));
    }
    OK(cudaGraphExecDestroy(e));
    OK(cudaGraphDestroy(g));
    OK(cudaStreamDestroy(s));
  }
  OK(cudaFree(dv));
  OK(cudaFree(dout));
  OK(cudaFree(dcount));
  OK(cudaFree(dtrace));
}

int main() {
  explicit_nodes();
  exec_update();
  memory_nodes();
  conditional_nodes();
  OK(cudaGetLastError());
  printf(failures == 0 ? "PASS\n" : "FAIL (%d)\n", failures);
  return failures != 0;
}
