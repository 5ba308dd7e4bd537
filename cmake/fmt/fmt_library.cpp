// fmt's compiled part, built once for the whole project.
//
// Every target used fmt header-only (FMT_HEADER_ONLY), so that nothing links libfmt.so (Debian
// ships no static libfmt): then each of the ~300 translation units compiled fmt's implementation
// again, about 4 CPU-seconds each. This file is that implementation, compiled once into the static
// library reservoir_fmt (position independent, linked into the binaries, the Python module and the
// plugins alike): the definitions come from fmt's own format-inl.h; the explicit instantiations
// are the ones fmt/format.h declares `extern` or leaves undefined when it is not header-only.
#include <fmt/format.h>

#ifndef FMT_HEADER_ONLY
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

// Shortest round-trip formatting of floating point (declared in format.h, defined above).
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

// The locale hooks format.h declares extern.
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

// Formatting into a growable buffer, the path every fmt::format call ends in.
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                                 locale_ref);
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
#endif
