"""profiles/pictures.py: the one list of the pictures a tool draws from a committed file. Every
picture in docs/img/ is on it, each is the drawing of its committed data file (the pages show what
their files say), and a page shows each one and names its data file."""
import sys
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "profiles"))

import pictures  # noqa: E402  (after the path is set)

PAGES = ("lessons/*/*.md", "docs/*.md", "README.md")


class Pictures(unittest.TestCase):
    def test_every_drawn_picture_is_on_the_list(self):
        listed = {picture.image for picture in pictures.PICTURES}
        for image in sorted((REPOSITORY / "docs" / "img").glob("*.svg")):
            with self.subTest(image=image.name):
                self.assertIn(str(image.relative_to(REPOSITORY)), listed,
                              "a picture with no data file to draw it from: add it to "
                              "profiles/pictures.py")

    def test_each_picture_is_the_drawing_of_its_committed_data(self):
        self.assertEqual(pictures.main(["--check"]), 0)

    def test_a_page_shows_each_picture_and_names_its_data(self):
        pages = [page for pattern in PAGES for page in REPOSITORY.glob(pattern)]
        for picture in pictures.present():
            with self.subTest(image=picture.image):
                showing = [page for page in pages if Path(picture.image).name in page.read_text()]
                self.assertTrue(showing, "no page shows it")
                self.assertTrue(any(Path(picture.data).name in page.read_text() for page in showing),
                                f"no page that shows it names {picture.data}")


if __name__ == "__main__":
    unittest.main()
