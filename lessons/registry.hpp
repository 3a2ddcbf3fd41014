#pragma once

#include <vector>

#include "common/lesson.hpp"

namespace gemm {

// Every lesson of the course, in order. Tests, the benchmark and the grader iterate this list.
const std::vector<Lesson>& all_lessons();

// The lesson with this number, or nullptr.
const Lesson* find_lesson(int id);

// Each lesson's entry, defined with its kernels in the one translation unit that compiles them
// (lessons/CMakeLists.txt writes it: it includes the lesson's kernel.cuh), so that a program that
// runs a lesson links its kernels instead of compiling them again. A program calls only the
// entries of the lessons it links (lessonNN_kernels; gemm_lessons links them all).
namespace lessons {
const Lesson& lesson01();
const Lesson& lesson02();
const Lesson& lesson03();
const Lesson& lesson04();
const Lesson& lesson05();
const Lesson& lesson06();
const Lesson& lesson07();
const Lesson& lesson08();
const Lesson& lesson09();
const Lesson& lesson10();
const Lesson& lesson11();
const Lesson& lesson12();
const Lesson& lesson13();
const Lesson& lesson14();
const Lesson& lesson15();
const Lesson& lesson16();
const Lesson& lesson17();
const Lesson& lesson18();
}  // namespace lessons

}  // namespace gemm
