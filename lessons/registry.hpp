#pragma once

#include <vector>

#include "common/lesson.hpp"
// Each lesson's entry, gemm::lessons::lessonNN(), declared for every lesson of the course. The
// one list of the lessons is lessons/CMakeLists.txt's add_lesson calls, from which it writes this
// header and all_lessons() into the build tree. An entry is defined with its kernels in the one
// translation unit that compiles them (lessons/CMakeLists.txt writes it too: it includes the
// lesson's kernel.cuh), so that a program that runs a lesson links its kernels instead of
// compiling them again. A program calls only the entries of the lessons it links
// (lessonNN_kernels; gemm_lessons links them all).
#include "lesson_entries.hpp"

namespace gemm {

// Every lesson of the course, in order. Tests, the benchmark and the grader iterate this list.
const std::vector<Lesson>& all_lessons();

// The lesson with this number, or nullptr.
const Lesson* find_lesson(int id);

}  // namespace gemm
