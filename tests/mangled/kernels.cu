/* kernels.cu: kernels whose mangled names exercise what graph/mangled.c
 * must read: templates and their substitutions, pointer, const, volatile
 * and restrict parameters, template parameters standing for pointers,
 * parameter packs, lambdas (extended __device__ lambdas), local and
 * anonymous-namespace names, std:: types, decltype and value expressions,
 * template template parameters, literals. tests/mangled/mangled.cmake
 * compiles it to a cubin at build time; test_mangled reads the kernel
 * names from it and checks each against libstdc++'s demangler. Nothing
 * here runs. */
#include <cuda_fp16.h>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <array>
namespace ns {
template <typename T, int N> struct Array { T v[N]; };
struct Functor { __device__ float operator()(float x) const { return x * 2; } };
template <typename T> struct Wrap { T t; };
}
template <typename T> __global__ void k_tmpl(T *out, const T *in, T a) { (void)out; (void)in; (void)a; }
template __global__ void k_tmpl<float>(float *, const float *, float);
template __global__ void k_tmpl<const int *>(const int **, const int *const *, const int *);
template <typename T> __global__ void k_param(T p) { (void)p; }
template __global__ void k_param<const float *>(const float *);
template __global__ void k_param<float *__restrict__>(float *__restrict__);
template __global__ void k_param<const volatile double *>(const volatile double *);
template __global__ void k_param<ns::Array<char *, 2>>(ns::Array<char *, 2>);
template __global__ void k_param<const float (*)[4]>(const float (*)[4]);
template __global__ void k_param<void (*)(int)>(void (*)(int));
template <typename... Args> __global__ void k_pack(Args... args) { }
template __global__ void k_pack<const float *, float *, int, const ns::Wrap<int> *>(const float *, float *, int, const ns::Wrap<int> *);
template __global__ void k_pack<>();
template <typename A, typename... Args> __global__ void k_pack2(A a, const Args *... args) { }
template __global__ void k_pack2<int, float, double>(int, const float *, const double *);
template <typename F, typename T> __global__ void k_apply(F f, T *out, const T *in) { out[0] = f(in[0]); }
template __global__ void k_apply<ns::Functor, float>(ns::Functor, float *, const float *);
template <int N, bool B, typename T> __global__ void k_vals(const T *__restrict__ a, T *__restrict__ b) { }
template __global__ void k_vals<4, true, float>(const float *__restrict__, float *__restrict__);
template __global__ void k_vals<-3, false, ns::Array<float, 3>>(const ns::Array<float, 3> *__restrict__, ns::Array<float, 3> *__restrict__);
template <typename T> __global__ void k_tuple(std::tuple<T *, const T *> t, std::pair<const T *, int> p) { }
template __global__ void k_tuple<float>(std::tuple<float *, const float *>, std::pair<const float *, int>);
template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
__global__ void k_sfinae(const T *x, T *y) { }
template __global__ void k_sfinae<float, 0>(const float *, float *);
template <typename T> __global__ void k_decl(decltype(T() + 1) *y, const T *x) { }
template __global__ void k_decl<float>(float *, const float *);
template <typename T, size_t N> __global__ void k_arr(std::array<const T *, N> a, const T (*m)[N]) { }
template __global__ void k_arr<float, 3>(std::array<const float *, 3>, const float (*)[3]);

template <typename T> struct Outer { template <typename U> struct Inner { }; };
template <typename T, typename U> __global__ void k_inner(typename Outer<T>::template Inner<U> i, const U *u) { }
template __global__ void k_inner<int, float>(Outer<int>::Inner<float>, const float *);
template <typename F> __global__ void k_lambda(F f, float *out) { out[0] = f(1.0f); }
void launch_lambdas() {
  auto l1 = [] __device__ (float x) { return x + 1; };
  k_lambda<<<1, 1>>>(l1, nullptr);
  int c = 3;
  auto l2 = [c] __device__ (float x) { return x * c; };
  k_lambda<<<1, 1>>>(l2, nullptr);
  k_apply<<<1, 1>>>([] __device__ (const float &x) { return x; }, (float *)nullptr, (const float *)nullptr);
}
namespace {
template <typename T> __global__ void k_anon(const T *const *pp, T **q) { }
template __global__ void k_anon<int>(const int *const *, int **);
}
struct S { template <typename T> struct In { using type = const T *; }; };
template <typename T> __global__ void k_dep(typename S::In<T>::type p, T *q) { }
template __global__ void k_dep<double>(const double *, double *);
template <template <typename> class W, typename T> __global__ void k_tt(W<T> w, const W<T> *pw) { }
template __global__ void k_tt<ns::Wrap, float>(ns::Wrap<float>, const ns::Wrap<float> *);
template <typename T> __global__ void k_ref_ptr(T *const *a, const T &r) { }
template __global__ void k_ref_ptr<float>(float *const *, const float &);
template <unsigned long long V, char C> __global__ void k_lit(const unsigned char *p) { }
template __global__ void k_lit<18446744073709551615ull, 'x'>(const unsigned char *);
template <typename T> __global__ void k_half(const __half *h, T *t) { }
template __global__ void k_half<__half2>(const __half *, __half2 *);
/* PyTorch's shape: a __device__ lambda inside the lambda of a dispatch
 * macro, inside a function template, passed with a functor wrapper. */
template <typename F, typename... Ts> __global__ void k_elementwise(int n, F f, ns::Array<char *, 2> data, const Ts *...extra) { }
namespace at { namespace native {
template <typename scalar_t> void launch_unary(scalar_t *out, int n) {
  [&] {
    auto op = [] __device__ (scalar_t a) -> scalar_t { return a * a; };
    k_elementwise<<<1, 1>>>(n, op, ns::Array<char *, 2>{}, (const scalar_t *)out, (const int *)nullptr);
  }();
}
template void launch_unary<float>(float *, int);
template void launch_unary<double>(double *, int);
struct Reducer {
  template <int vt, typename acc_t> void run(const acc_t *in) {
    auto l = [=] __device__ (acc_t a) { return a + a; };
    k_lambda<<<1, 1>>>(l, (float *)nullptr);
    (void)in;
  }
};
template void Reducer::run<4, float>(const float *);
}}
