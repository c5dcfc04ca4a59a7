import { query, rest } from "./api.ts";
import { h } from "./dom.ts";
import { localizedView } from "./localized.ts";
import { dnView } from "./names.ts";
import { filterOf } from "./pages/directory.ts";
import { segmentOfType } from "./types.ts";

/** How long typing pauses before the directory is asked. */
const TYPING_PAUSE_MS = 200;

interface Found {
  readonly dn: string;
  readonly name: string;
  readonly about: string | undefined;
}

const first = (value: unknown): string | undefined =>
  Array.isArray(value) ? (value[0] as string | undefined) : (value as string | undefined);

/**
 * A text field that finds directory entries of one type as the person types (the REST
 * channel's search, the same words the Directory page takes) and offers them as a list; the
 * value is the picked entry's DN, or what was typed when nothing was picked. A combobox in
 * the ARIA sense: arrows move through the list, Enter picks, Escape closes.
 */
export function entryPicker(options: {
  readonly id: string;
  readonly name: string;
  readonly entryType: string;
  readonly required: boolean;
  readonly describedBy: string | null;
}): { element: HTMLElement; input: HTMLInputElement; value(): string | undefined } {
  const listId = `${options.id}-list`;
  const input = h("input", {
    id: options.id,
    name: options.name,
    type: "text",
    required: options.required,
    autocomplete: "off",
    role: "combobox",
    "aria-autocomplete": "list",
    "aria-expanded": "false",
    "aria-controls": listId,
    "aria-describedby": options.describedBy,
  });
  const list = h("ul", { id: listId, role: "listbox", hidden: true });
  const chosen = h("p", { class: "hint picked", "aria-live": "polite" });
  let picked: Found | undefined;
  let found: Found[] = [];
  let active = -1;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let asked = 0;

  const close = () => {
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
  };
  const pick = (entry: Found) => {
    picked = entry;
    input.value = entry.name;
    chosen.replaceChildren("Picked ", dnView(entry.dn));
    close();
  };
  const mark = (index: number) => {
    active = index;
    list.querySelectorAll('[role="option"]').forEach((option, i) => {
      option.setAttribute("aria-selected", String(i === index));
      if (i === index) input.setAttribute("aria-activedescendant", option.id);
    });
  };
  const show = (entries: Found[]) => {
    found = entries;
    list.replaceChildren(
      ...(entries.length === 0
        ? [h("li", { class: "none" }, "Nothing found.")]
        : entries.map((entry, index) =>
            h(
              "li",
              {
                id: `${listId}-${index}`,
                role: "option",
                "aria-selected": "false",
                "data-dn": entry.dn,
                // Before the input loses focus, so the click is not lost with the list.
                onmousedown: (event: Event) => {
                  event.preventDefault();
                  pick(entry);
                },
              },
              h("strong", null, entry.name),
              entry.about ? [" — ", localizedView(entry.about)] : null,
              dnView(entry.dn),
            ),
          )),
    );
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
  };
  const search = async (text: string) => {
    const mine = ++asked;
    const segment = await segmentOfType(options.entryType);
    const filter = filterOf(text);
    if (!segment || !filter) return close();
    try {
      const page = await rest<{ nodes: Record<string, unknown>[] }>(
        `/api/entries/${encodeURIComponent(segment)}${query({
          filter,
          first: 8,
          sort: "cn",
          fields: "cn,displayName,description",
        })}`,
      );
      if (mine !== asked) return; // an older answer arriving late
      show(
        page.nodes.map((node) => ({
          dn: String(node.dn),
          name: String(first(node.displayName) ?? first(node.cn) ?? node.dn),
          about: first(node.description),
        })),
      );
    } catch {
      close(); // without the right to search, the field is a plain text field
    }
  };

  input.addEventListener("input", () => {
    picked = undefined;
    chosen.replaceChildren();
    clearTimeout(timer);
    const text = input.value;
    timer = setTimeout(() => void search(text), TYPING_PAUSE_MS);
  });
  input.addEventListener("keydown", (event) => {
    if (list.hidden || found.length === 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      mark((active + step + found.length) % found.length);
    } else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();
      pick(found[active]!);
    } else if (event.key === "Escape") {
      close();
    }
  });
  input.addEventListener("blur", close);

  return {
    element: h("div", { class: "picker" }, input, list, chosen),
    input,
    value: () => {
      if (picked && input.value === picked.name) return picked.dn;
      const text = input.value.trim();
      return text === "" ? undefined : text;
    },
  };
}
