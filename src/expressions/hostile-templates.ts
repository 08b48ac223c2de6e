/**
 * Templates that try to make one render as expensive as possible: nested and long loops, huge ranges,
 * string and array building, slow standard filters and operators over large arrays. Each must be refused
 * by the work limit (EXPRESSION_LIMITS.work) after about 10 ms of work. Shared by the unit, e2e and bench
 * checks; `data` is a 100,000-character string where they read it.
 */
export const HOSTILE_TEMPLATES: readonly string[] = [
  '{% for i in (1..1000000) %}{% for j in (1..1000000) %}{% endfor %}{% endfor %}',
  '{% for i in (1..1000000) %}{% for j in (1..1000000) %}x{% endfor %}{% endfor %}',
  '{% for i in (1..1000000) %}{% unless i == 0 %}{% if i > 0 %}{% cycle "a", "b" %}{% endif %}{% endunless %}{% endfor %}',
  '{% tablerow i in (1..1000000) %}{% increment n %}{% endtablerow %}',
  '{% capture s %}{% for i in (1..1000000) %}ab{% endfor %}{% endcapture %}{{ s | size }}',
  '{% assign a = (1..9000000) %}{{ a | size }}',
  '{{ (1..5000000) | sort | reverse | uniq | size }}',
  '{% assign a = (1..2000000) | where: "x" %}{{ a | size }}',
  '{% assign s = "" %}{% for i in (1..100000) %}{% assign s = s | append: "xxxxxxxxxx" %}{% endfor %}{{ s | size }}',
  '{% assign s = data %}{% for i in (1..30) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}',
  '{% for i in (1..3000) %}{{ data | split: "" | reverse | join: "" | size }}{% endfor %}',
  '{% for i in (1..1000) %}{% assign x = data | replace: "x", "yy" | size %}{% endfor %}',
  '{% assign a = (1..5000) %}{% for i in (1..1000) %}{% if a contains i %}{% endif %}{% endfor %}',
  '{% assign a = (1..9000) %}{% for i in (1..100) %}{% if a == a %}{% endif %}{% endfor %}',
  '{{ data | split: "" | sort | uniq | join: "" | size }}',
  `{{ data | split: "" ${'| reject: "y" '.repeat(40)}| size }}`,
  '{% for i in (1..1000) %}{{ data | to_base64 | size }}{% endfor %}',
];
