#include "lessons/registry.hpp"

namespace gemm {

const std::vector<Lesson>& all_lessons() {
  static const std::vector<Lesson> lessons = {
      lessons::lesson01(),
      lessons::lesson02(),
      lessons::lesson03(),
      lessons::lesson04(),
      lessons::lesson05(),
      lessons::lesson06(),
      lessons::lesson07(),
      lessons::lesson08(),
      lessons::lesson09(),
      lessons::lesson10(),
      lessons::lesson11(),
      lessons::lesson12(),
      lessons::lesson13(),
      lessons::lesson14(),
      lessons::lesson15(),
      lessons::lesson16(),
      lessons::lesson17(),
      lessons::lesson18(),
  };
  return lessons;
}

const Lesson* find_lesson(int id) {
  for (const Lesson& lesson : all_lessons())
    if (lesson.id == id) return &lesson;
  return nullptr;
}

}  // namespace gemm
