//! Tool-definition dialects: the JSON shapes LLM APIs take tool definitions in. The generated
//! registry holds one precomputed text per dialect, in [`Format::ALL`] order.

crate::named_enum! {
    /// A tool-definition dialect.
    pub enum Format {
        /// OpenAI: `[{"type": "function", "function": {"name", "description", "parameters"}}]`.
        OpenAi = "openai",
        /// Anthropic: `[{"name", "description", "input_schema"}]`.
        Anthropic = "anthropic",
        /// MCP: `[{"name", "description", "inputSchema"}]`.
        Mcp = "mcp",
        /// Plain JSON Schema: `{"<tool>": {<schema with title and description>}}`.
        JsonSchema = "json-schema",
    }
}

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn the_table_round_trips() {
        for (i, f) in Format::ALL.into_iter().enumerate() {
            assert_eq!(f.index(), i);
            assert_eq!(Format::NAMES.get(i), Some(&f.name()));
            assert_eq!(Format::from_name(f.name()), Some(f));
        }
        assert_eq!(Format::from_name("OpenAI"), None);
    }
}
