// Compile-time lists of tuning candidates, and a run-time pick among them:
//   using L = type_list<A, B>;
//   flat_map_t<L, F>                       concatenation of F<A>, F<B> (each a type_list)
//   for_each_type<L>([](auto tag, std::size_t i) { using X = typename decltype(tag)::type; });
//   with_type<L>(i, f)                     f(type_tag<X>{}) for the i-th X; false when i is out of range
//   with_band<L>(n, f)                     f(type_tag<B>{}) for the first B with B::max_n >= n (size bands)
#pragma once

#include <cstddef>
#include <utility>

namespace gutf8::prim::detail {

template <class... Ts>
struct type_list {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class T>
struct type_tag {
  using type = T;
};

template <class... Ls>
struct concat;
template <>
struct concat<> {
  using type = type_list<>;
};
template <class... As>
struct concat<type_list<As...>> {
  using type = type_list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat<type_list<As...>, type_list<Bs...>, Rest...> {
  using type = typename concat<type_list<As..., Bs...>, Rest...>::type;
};

template <class L, template <class> class F>
struct flat_map;
template <class... Ts, template <class> class F>
struct flat_map<type_list<Ts...>, F> {
  using type = typename concat<F<Ts>...>::type;
};
template <class L, template <class> class F>
using flat_map_t = typename flat_map<L, F>::type;

template <class L>
struct for_each_impl;
template <class... Ts>
struct for_each_impl<type_list<Ts...>> {
  template <class F>
  static void run(F&& f) {
    std::size_t i = 0;
    (f(type_tag<Ts>{}, i++), ...);
  }
};
template <class L, class F>
void for_each_type(F&& f) {
  for_each_impl<L>::run(std::forward<F>(f));
}

template <class L, class F>
bool with_type(std::size_t index, F&& f) {
  bool found = false;
  for_each_type<L>([&](auto tag, std::size_t i) {
    if (i == index) {
      f(tag);
      found = true;
    }
  });
  return found;
}

// Size bands of a tuning (each B has max_n, in increasing order): f(type_tag<B>{}) for the first
// band that holds n; false when none does.
template <class Bands, class F>
bool with_band(std::size_t n, F&& f) {
  bool found = false;
  for_each_type<Bands>([&](auto tag, std::size_t) {
    if (found || n > decltype(tag)::type::max_n) return;
    found = true;
    f(tag);
  });
  return found;
}

}  // namespace gutf8::prim::detail
