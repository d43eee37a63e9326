// The CSV import's file picker: reads the chosen file into the form's textarea, so the
// preview sees the same text as a paste. Without JavaScript the picker is hidden and
// pasting works as before.
document.addEventListener("DOMContentLoaded", () => {
  for (const picker of document.querySelectorAll("[data-fills]")) {
    picker.hidden = false;
    const input = picker.querySelector("input[type=file]");
    input.addEventListener("change", async () => {
      const file = input.files[0];
      if (!file) return;
      document.getElementById(picker.dataset.fills).value = await file.text();
    });
  }
});
