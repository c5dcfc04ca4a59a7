// @ts-check
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", ".annal/", ".tap/", "coverage/", "dist/"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          // tap queues subtests itself; `t.test(...)` needs no await.
          allowForKnownSafeCalls: [
            { from: "package", name: ["test", "only", "skip", "todo"], package: "@tapjs/core" },
            { from: "package", name: ["test", "only", "skip", "todo"], package: "@tapjs/test" },
            // node:test runs its tests itself, as tap does.
            { from: "package", name: ["test", "describe", "it"], package: "node:test" },
          ],
        },
      ],
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: false }],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
);
