// Written by bench/fit_auto_model.py from bench/results/auto_model.csv: do not edit.
#pragma once

namespace gutf8::internal::auto_fit {

inline constexpr double startup_seconds = 0.32;
inline constexpr double gpu_bytes_per_second = 11.1e9;
inline constexpr double cpu_max_bytes_per_second = 55.6e9;
inline constexpr double cpu_half_rate_threads = 18.6;
inline constexpr double cpu_memory_bytes_per_second = 70.6e9;
inline constexpr double worker_validate = 4.9e9;
inline constexpr double worker_decode = 2.15e9;
inline constexpr double worker_encode = 2.54e9;
inline constexpr double worker_repair = 5.04e9;
inline constexpr double worker_stats = 3e9;
inline constexpr double gpu_file_validate = 26.9e9;
inline constexpr double gpu_file_decode = 10.2e9;
inline constexpr double gpu_file_encode = 19.6e9;
inline constexpr double gpu_file_repair = 15.4e9;
inline constexpr double gpu_file_stats = 22.7e9;

}  // namespace gutf8::internal::auto_fit
