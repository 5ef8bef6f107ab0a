#!/usr/bin/env bash
# `vlm families` and the README's copies of it: the README's supported-families
# table and the family list in its first paragraph are exactly what the family
# registry prints (`vlm families --markdown`, `--summary`), so the first page
# names no family that does not run; the JSON agrees with the table; and a
# config.json whose model_type no family runs is refused naming exactly the
# registry's model_types. Regenerate the README's copies with
# `tests/cli/families.sh BUILD/vlm - . --update`.
# Arguments: VLM MAKE_TINY SOURCE_DIR [--update].
source "$(dirname "$0")/lib.sh" "$@"
readme=$source_dir/README.md

# readme_block MARKER: the README's text between "<!-- MARKER -->" and the
# next "<!-- end -->".
readme_block() {
  python3 - "$readme" "$1" <<'PY'
import sys
text = open(sys.argv[1]).read()
start = text.find(f"<!-- {sys.argv[2]} -->")
if start < 0:
    sys.exit(f"README.md has no <!-- {sys.argv[2]} --> block")
start += len(f"<!-- {sys.argv[2]} -->")
sys.stdout.write(text[start:text.index("<!-- end -->", start)].lstrip("\n"))
PY
}
export -f readme_block
export readme

if [ "${4:-}" = --update ]; then
  python3 - "$readme" "$("$vlm" families --summary)" "$("$vlm" families --markdown)" <<'PY'
import re, sys
path, summary, table = sys.argv[1:4]
text = open(path).read()
text = re.sub(r"(<!-- vlm families --summary -->).*?(<!-- end -->)", lambda m: m.group(1) + summary + m.group(2), text, flags=re.S)
text = re.sub(r"(<!-- vlm families --markdown -->\n).*?(<!-- end -->)", lambda m: m.group(1) + table + "\n" + m.group(2), text, flags=re.S)
open(path, "w").write(text)
PY
  echo "README.md updated from vlm families"
fi

check readme_table_is_vlm_families bash -c 'run 0 families --markdown && diff <(readme_block "vlm families --markdown") "$work/out"'
check readme_first_paragraph_is_vlm_families bash -c 'run 0 families --summary \
  && diff <(readme_block "vlm families --summary") <(tr -d "\n" <"$work/out")'
# The list is in the first paragraph (the one after the title), not moved away.
check readme_list_in_first_paragraph bash -c 'awk "NR > 2 && /^$/ {exit} NR > 2" "$readme" | grep -qF "<!-- vlm families --summary -->"'
check families_json_matches_table bash -c 'run 0 families --json && python3 - "$work/out" <<PY
import json, subprocess, sys
families = json.load(open(sys.argv[1]))
table = subprocess.run(["$vlm", "families", "--markdown"], capture_output=True, text=True).stdout.splitlines()[2:]
assert [row.split("|")[2].strip(" \`") for row in table] == [f["model_type"] for f in families], (table, families)
for row, family in zip(table, families):
    cells = [cell.strip() for cell in row.split("|")[1:-1]]
    assert cells[0] == family["family"], (cells, family)
    assert cells[3:5] == ["yes" if family["image"] else "no", "yes" if family["audio"] else "no"], (cells, family)
    assert all(layout["name"] in row for layout in family["layouts"]), (row, family)
PY'
# The config error's "supported" list names only what runs: the registry's.
mkdir -p "$work/unknown"
echo '{"model_type": "no_such_family"}' >"$work/unknown/config.json"
check config_error_lists_the_registry bash -c 'run 1 inspect --model "$work/unknown" \
  && expected=$("$vlm" families --json | python3 -c "import json, sys; print(\", \".join(f[\"model_type\"] for f in json.load(sys.stdin)))") \
  && err_has "model_type \"no_such_family\" is not supported (supported: $expected)"'
finish
