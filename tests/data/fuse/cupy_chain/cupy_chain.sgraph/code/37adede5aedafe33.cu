typedef float X;
typedef float Y;

/* CuPy-shaped array arguments (see gen.py): not CuPy's code. */
template <bool B, class T, class F> struct sgc_if { typedef T type; };
template <class T, class F> struct sgc_if<false, T, F> { typedef F type; };

template <typename T, int _ndim, bool _c_contiguous = false, bool _use_32bit_indexing = false>
class CArray {
public:
    static const int ndim = _ndim;
    typedef typename sgc_if<_use_32bit_indexing, int, ptrdiff_t>::type index_t;
private:
    T *data_;
    ptrdiff_t size_;
    ptrdiff_t shape_[_ndim];
    ptrdiff_t strides_[_ndim];
public:
    /* element at a multi-index: byte strides, in the index type */
    template <typename Int> __device__ const T &operator[](const Int (&idx)[_ndim]) const {
        const char *p = reinterpret_cast<const char *>(data_);
        for (int d = 0; d < _ndim; ++d)
            p += static_cast<index_t>(strides_[d]) * static_cast<index_t>(idx[d]);
        return *reinterpret_cast<const T *>(p);
    }
    template <typename Int> __device__ T &operator[](const Int (&idx)[_ndim]) {
        return const_cast<T &>(static_cast<const CArray &>(*this)[idx]);
    }
};

template <int _ndim> class CIndexer {
    ptrdiff_t size_;
    ptrdiff_t shape_[_ndim];
    ptrdiff_t index_[_ndim];
public:
    __device__ ptrdiff_t size() const { return size_; }
    __device__ const ptrdiff_t (&get() const)[_ndim] { return index_; }
    __device__ void set(ptrdiff_t i) {
        /* the 1-D case only: the multi-index is the linear index */
        index_[0] = i;
    }
};

#define CUPY_FOR(i, n)                                                                     \
    for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x;      \
         i < (n); i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)

extern "C" __global__ void sg_stage3(const CArray<float, 1, true, true> _raw_x, CArray<float, 1, true, true> _raw_y, CIndexer<1> _ind) {
  ;
  #pragma unroll 1
  CUPY_FOR(i, _ind.size()) {
    _ind.set(i);
    const X &x = _raw_x[_ind.get()];
    Y &y = _raw_y[_ind.get()];
    y = fminf(fmaxf(x, 0.0f), 50.0f);
  }
  ;
}
